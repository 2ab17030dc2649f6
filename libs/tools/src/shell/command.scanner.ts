/** Tokenising and quote removal for the command-line scanner (see command-line.ts). */

import { REASONS, unreadable } from './command.reasons';

// ---------------------------------------------------------------------------------------------
// Tokens

export type Separator = '\n' | ';' | '&' | '&&' | '||' | '|' | '|&';
/** Longest first, so that `>>` is not read as `>`. */
const REDIRECTION_OPERATORS = ['&>>', '&>', '>>', '>|', '>&', '<>', '<&', '>', '<'] as const;
export type RedirectionOperator = (typeof REDIRECTION_OPERATORS)[number];

export interface Word {
  /** After quote removal; expansions stay as written ("$HOME"). */
  text: string;
  /** As it appears in the line. */
  raw: string;
  /** The shell may turn it into something else: a `$` expansion, or an unquoted wildcard or brace. */
  expands: boolean;
}

export type CommandToken = { kind: 'word'; word: Word } | { kind: 'redirection'; operator: RedirectionOperator; fd: string | null };
export type Token = CommandToken | { kind: 'separator'; separator: Separator };

interface WordInProgress {
  start: number;
  text: string;
  expands: boolean;
}

/** Splits a line into words, separators and redirections; throws UnreadableCommandLine on anything outside the grammar. */
export class CommandLineLexer {
  private position = 0;
  private readonly tokens: Token[] = [];
  private word: WordInProgress | null = null;

  constructor(private readonly line: string) {}

  tokenize(): Token[] {
    while (this.position < this.line.length) {
      this.readNext();
    }
    this.endWord();
    return this.tokens;
  }

  private at(offset = 0): string {
    return this.line.charAt(this.position + offset);
  }

  private readNext(): void {
    const char = this.at();
    if (char === ' ' || char === '\t') {
      this.endWord();
      this.position += 1;
    } else if (char === '\\' && this.at(1) === '\n') {
      this.readLineContinuation();
    } else if (char === '<' || char === '>' || (char === '&' && this.at(1) === '>')) {
      this.readRedirection();
    } else if ('\n;&|'.includes(char)) {
      this.endWord();
      this.readSeparator();
    } else if (char === '(' || char === ')') {
      throw unreadable(REASONS.parentheses);
    } else if (char === '#' && this.word === null) {
      throw unreadable(REASONS.comment);
    } else {
      this.readWordPart(this.startWord());
    }
  }

  /**
   * The shell deletes backslash-newline before it splits tokens, so inside a word it could join
   * `$` and `(` into a substitution this scanner never saw; only a continuation between tokens is
   * accepted, where it is just a blank.
   */
  private readLineContinuation(): void {
    if (this.word !== null) {
      throw unreadable(REASONS.continuationInWord);
    }
    this.position += 2;
  }

  private readSeparator(): void {
    const pair = this.line.slice(this.position, this.position + 2);
    if (pair === '&&' || pair === '||' || pair === '|&') {
      this.tokens.push({ kind: 'separator', separator: pair });
      this.position += 2;
      return;
    }
    this.tokens.push({ kind: 'separator', separator: this.at() as Separator });
    this.position += 1;
  }

  private readRedirection(): void {
    const fd = this.takeFileDescriptorNumber();
    const ahead = this.line.slice(this.position, this.position + 3);
    if (ahead.startsWith('<<<')) {
      throw unreadable(REASONS.herestring);
    }
    if (ahead.startsWith('<<')) {
      throw unreadable(REASONS.heredoc);
    }
    if (ahead.startsWith('<(') || ahead.startsWith('>(')) {
      throw unreadable(REASONS.processSubstitution);
    }
    const operator = REDIRECTION_OPERATORS.find((candidate) => ahead.startsWith(candidate)) ?? '<';
    this.tokens.push({ kind: 'redirection', operator, fd });
    this.position += operator.length;
  }

  /** `2>`: digits written right before `<` or `>` name the file descriptor instead of being a word. */
  private takeFileDescriptorNumber(): string | null {
    const word = this.word;
    if (word === null || this.at() === '&') {
      this.endWord();
      return null;
    }
    const raw = this.line.slice(word.start, this.position);
    if (/^[0-9]+$/.test(raw)) {
      this.word = null;
      return raw;
    }
    if (raw.startsWith('{')) {
      throw unreadable(REASONS.fdVariable);
    }
    this.endWord();
    return null;
  }

  private startWord(): WordInProgress {
    this.word ??= { start: this.position, text: '', expands: false };
    return this.word;
  }

  private endWord(): void {
    const word = this.word;
    if (word === null) {
      return;
    }
    this.word = null;
    const raw = this.line.slice(word.start, this.position);
    if (raw === '{' || raw === '}') {
      throw unreadable(REASONS.braces);
    }
    this.tokens.push({ kind: 'word', word: { text: word.text, raw, expands: word.expands } });
  }

  private readWordPart(word: WordInProgress): void {
    const char = this.at();
    switch (char) {
      case "'":
        this.readSingleQuoted(word);
        return;
      case '"':
        this.readDoubleQuoted(word);
        return;
      case '\\':
        this.readEscaped(word);
        return;
      case '$':
        this.readDollar(word, false);
        return;
      case '`':
        throw unreadable(REASONS.backticks);
      default:
        word.text += char;
        word.expands ||= '*?[{'.includes(char);
        this.position += 1;
    }
  }

  private readSingleQuoted(word: WordInProgress): void {
    const end = this.line.indexOf("'", this.position + 1);
    if (end === -1) {
      throw unreadable(REASONS.unterminatedQuote);
    }
    word.text += this.line.slice(this.position + 1, end);
    this.position = end + 1;
  }

  private readDoubleQuoted(word: WordInProgress): void {
    this.position += 1;
    for (;;) {
      const char = this.at();
      if (char === '') {
        throw unreadable(REASONS.unterminatedQuote);
      }
      if (char === '"') {
        this.position += 1;
        return;
      }
      if (char === '\\') {
        this.readEscapedInDoubleQuotes(word);
      } else if (char === '$') {
        this.readDollar(word, true);
      } else if (char === '`') {
        throw unreadable(REASONS.backticks);
      } else {
        word.text += char;
        this.position += 1;
      }
    }
  }

  private readEscaped(word: WordInProgress): void {
    const escaped = this.at(1);
    if (escaped === '') {
      throw unreadable(REASONS.trailingBackslash);
    }
    word.text += escaped;
    this.position += 2;
  }

  /** Inside double quotes a backslash escapes only `$`, `` ` ``, `"`, `\` and newline; elsewhere it stays. */
  private readEscapedInDoubleQuotes(word: WordInProgress): void {
    const escaped = this.at(1);
    if (escaped === '\n') {
      throw unreadable(REASONS.continuationInQuotes);
    }
    if (escaped !== '' && '$`"\\'.includes(escaped)) {
      word.text += escaped;
      this.position += 2;
      return;
    }
    word.text += '\\';
    this.position += 1;
  }

  private readDollar(word: WordInProgress, inDoubleQuotes: boolean): void {
    const next = this.at(1);
    if (next === '(') {
      throw unreadable(this.at(2) === '(' ? REASONS.arithmetic : REASONS.commandSubstitution);
    }
    if (next === '[') {
      throw unreadable(REASONS.arithmetic);
    }
    if (next === '{') {
      this.readBracedParameter(word);
      return;
    }
    if (!inDoubleQuotes && (next === "'" || next === '"')) {
      throw unreadable(REASONS.dollarQuote);
    }
    const name = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(this.line.slice(this.position + 1))?.[0];
    if (name === undefined) {
      word.text += '$';
      this.position += 1;
      return;
    }
    word.text += `$${name}`;
    word.expands = true;
    this.position += 1 + name.length;
  }

  /** Only `${NAME}` is read: the other forms can assign (`${X:=...}`), do arithmetic or run code (`${!x}`, `${x@P}`). */
  private readBracedParameter(word: WordInProgress): void {
    const close = this.line.indexOf('}', this.position + 2);
    if (close === -1) {
      throw unreadable(REASONS.unterminatedParameter);
    }
    const inner = this.line.slice(this.position + 2, close);
    if (!/^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])$/.test(inner)) {
      throw unreadable(`it uses a parameter expansion that cannot be checked (\`\${${inner}}\`)`);
    }
    word.text += `\${${inner}}`;
    word.expands = true;
    this.position = close + 1;
  }
}
