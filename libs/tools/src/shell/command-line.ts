/**
 * Reads a `/bin/sh -c` command line just well enough to say which simple commands it runs, so that an
 * approval can be granted per command ("ls", "git status") instead of per tool.
 *
 * This is a hand-written allow-list scanner on purpose, not a shell parser library: a grant approves
 * future commands without asking, so every construct accepted here is one we have reasoned about.
 * Anything outside the small grammar below (substitutions, heredocs, grouping, control flow, file
 * writes, ...) makes the line non-reusable, which only means that the person is asked again.
 * /bin/sh may be bash, dash or another shell, so bash-only syntax is treated as live everywhere.
 * Each command also says whether its arguments stay inside the working folder (`confined`): a grant
 * or a safe command names a program, and must not carry it to `/etc` or `~/.ssh`.
 */

export interface SimpleCommand {
  /** The program as written after quote removal, e.g. "git", "./build.sh", "/usr/bin/ls". */
  program: string;
  /** Arguments after quote removal (redirections excluded). */
  args: string[];
  /** The grant key: "ls", "git status", "npm run build"; null when this command can never be granted for reuse. */
  key: string | null;
  /**
   * True when every argument and every input file (`< f`) is a plain relative path or word: nothing
   * absolute (`/etc`), under HOME (`~`), above the working folder (`..`), or expanded (`$`), also not
   * in an option's value (`--file=/etc/passwd`, `-f/etc/passwd`). A grant or a safe command covers
   * only confined commands, so that approving `cat notes/a.md` never approves `cat ~/.ssh/id_rsa`.
   */
  confined: boolean;
}

export type CommandLineAnalysis =
  | { reusable: true; commands: SimpleCommand[] }
  | { reusable: false; reason: string; commands: SimpleCommand[] };

// ---------------------------------------------------------------------------------------------
// What the scanner refuses, and why (each reason completes "This command offers no reusable grant: …").

const REASONS = {
  empty: 'the command line is empty',
  controlCharacters: 'it contains control characters',
  bidiControls: 'it contains bidirectional text controls, which can disguise what it runs',
  commandSubstitution: 'it uses command substitution ($(...))',
  arithmetic: 'it uses arithmetic expansion ($((...)))',
  backticks: 'it uses command substitution (backticks)',
  processSubstitution: 'it uses process substitution (<(...) or >(...))',
  heredoc: 'it uses a heredoc (<<)',
  herestring: 'it uses a here-string (<<<)',
  parentheses: 'it uses a subshell or grouping ((...))',
  braces: 'it uses command grouping ({ ...; })',
  comment: 'it contains a comment (#), which hides what follows from a reader',
  unterminatedQuote: 'it has an unterminated quote',
  unterminatedParameter: 'it has an unterminated ${...}',
  dollarQuote: "it uses $'...' or $\"...\" quoting",
  trailingBackslash: 'it ends with a backslash',
  continuationInWord: 'it continues a line (backslash-newline) in the middle of a word',
  continuationInQuotes: 'it continues a line (backslash-newline) inside double quotes',
  fdVariable: 'it stores a file descriptor in a variable ({name}>...)',
  onlyRedirections: 'it has a command made only of redirections',
  assignment: 'it sets variables for the command (X=1 ...)',
  negation: 'it negates a command (!)',
} as const;

class UnreadableCommandLine extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

function unreadable(reason: string): UnreadableCommandLine {
  return new UnreadableCommandLine(reason);
}

// ---------------------------------------------------------------------------------------------
// Programs whose grant could never mean one thing. Compared on the lower-cased basename, with and
// without a version suffix ("/bin/bash", "BASH", "python3.12"), since case-insensitive file systems
// and versioned names reach the same program.

/** They run a command or code given to them (or schedule, wrap or re-execute one). */
const RUNS_OTHER_COMMANDS = new Set([
  'eval', 'exec', 'source', '.', 'env', 'sudo', 'su', 'doas', 'sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'yash',
  'fish', 'csh', 'tcsh', 'rbash', 'xargs', 'nohup', 'nice', 'ionice', 'timeout', 'time', 'command', 'builtin', 'watch',
  'strace', 'ltrace', 'valgrind', 'chroot', 'setsid', 'stdbuf', 'flock', 'parallel', 'script', 'unbuffer', 'busybox',
  'npx', 'pnpx', 'bunx', 'trap', 'fc', 'jobs', 'compgen', 'complete', 'unshare', 'nsenter', 'runuser', 'pkexec',
  'systemd-run', 'chrt', 'taskset', 'setpriv', 'fakeroot', 'prlimit', 'sg', 'at', 'batch', 'crontab', 'toybox', 'gdb',
  'lldb', 'tmux', 'screen', 'ssh-agent', 'uvx', 'xdg-open', 'open',
]);

/** They run a command when told to, by an option or a command of their own; the value says how. */
const RUNS_COMMANDS_WHEN_TOLD = new Map<string, string>([
  ['find', '-exec, -ok; -delete and -fprint change files'],
  ['ssh', 'on another machine, or locally through -o ProxyCommand'],
  ['scp', '-S, -o ProxyCommand'],
  ['sftp', '-S, -o ProxyCommand'],
  ['rsync', '-e, --rsync-path'],
  ['tar', '--to-command, -I, --use-compress-program, --checkpoint-action, -F'],
  ['zip', '-TT'],
  ['vim', ':!, -c'],
  ['vi', ':!, -c'],
  ['nvim', ':!, -c'],
  ['ex', ':!, -c'],
  ['view', ':!, -c'],
  ['vimdiff', ':!, -c'],
  ['rvim', ':!, -c'],
  ['rview', ':!, -c'],
  ['gvim', ':!, -c'],
  ['gview', ':!, -c'],
  ['evim', ':!, -c'],
  ['nano', '--speller, ^T'],
  ['ed', '!'],
  ['man', '-P, -H, --pager'],
  ['less', '!, LESSOPEN'],
  ['more', '!'],
  ['sqlite3', '.shell, .system'],
  ['psql', '\\!'],
  ['mysql', 'system'],
  ['nc', '-e, -c'],
  ['ncat', '-e, --sh-exec'],
  ['netcat', '-e, -c'],
  ['socat', 'EXEC:, SYSTEM:'],
]);

/** Language interpreters: what they do is entirely in their arguments (`python3 -c ...`). */
const RUNS_CODE = new Set([
  'python', 'pypy', 'node', 'nodejs', 'deno', 'bun', 'perl', 'ruby', 'irb', 'php', 'lua', 'luajit', 'awk', 'gawk', 'mawk',
  'nawk', 'tclsh', 'wish', 'expect', 'osascript', 'pwsh', 'powershell', 'rscript', 'julia', 'groovy', 'ts-node', 'tsx',
  'sed', 'm4', 'emacs', 'emacsclient', 'erb', 'ghci', 'runghc', 'runhaskell', 'ocaml', 'scala', 'kotlin', 'java', 'jshell',
  'guile', 'racket', 'sbcl', 'clisp', 'elixir', 'iex', 'erl', 'escript', 'octave', 'r',
]);

/** Builtins that set variables, aliases or options, which changes what a later command on the line runs (`export PATH=...; ls`). */
const CHANGES_SHELL_STATE = new Set([
  'export', 'declare', 'typeset', 'local', 'readonly', 'unset', 'read', 'mapfile', 'readarray', 'getopts', 'let', 'alias',
  'unalias', 'hash', 'enable', 'set', 'shopt', 'ulimit',
]);

/** Words that are shell syntax, not programs, in command position. */
const RESERVED_WORDS = new Set([
  'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'in', 'function', 'select',
  'coproc', '[[', ']]', '{', '}',
]);

/**
 * Bash builtins that assign a variable, or evaluate a variable name (whose array subscript can run
 * code), when given one of these option letters: `printf -v PATH ...`, `test -v 'a[$(...)]'`, `wait -p`.
 */
const VARIABLE_OPTIONS = new Map<string, { letters: string; effect: string }>([
  ['printf', { letters: 'v', effect: 'sets a shell variable' }],
  ['test', { letters: 'vR', effect: 'evaluates a variable name, which can run code' }],
  ['wait', { letters: 'p', effect: 'sets a shell variable' }],
]);

/** Programs whose first argument says what they do, so the grant key includes it. */
const SUBCOMMAND_PROGRAMS = new Set([
  'git', 'npm', 'pnpm', 'yarn', 'docker', 'podman', 'kubectl', 'helm', 'cargo', 'go', 'pip', 'pip3', 'poetry', 'apt',
  'apt-get', 'brew', 'systemctl', 'gh', 'terraform', 'aws', 'gcloud', 'az', 'dotnet', 'composer', 'bundle', 'gem',
  'rustup', 'conda', 'make', 'docker-compose', 'podman-compose', 'nerdctl', 'oc', 'uv', 'pipx',
]);

/** Subcommands that run a script named by the next argument, so the key includes the script (`npm run build`). */
const SCRIPT_SUBCOMMANDS = new Map<string, readonly string[]>([
  ['npm', ['run', 'run-script', 'rum', 'urn']],
  ['pnpm', ['run', 'run-script']],
  ['yarn', ['run']],
]);

/** Subcommands that run an arbitrary program or package given to them. */
const PROGRAM_RUNNING_SUBCOMMANDS = new Map<string, readonly string[]>([
  ['npm', ['exec', 'x', 'explore', 'init', 'create', 'innit']],
  ['pnpm', ['exec', 'dlx', 'create']],
  ['yarn', ['exec', 'dlx', 'node', 'create']],
  ['git', ['grep', 'difftool', 'mergetool', 'bisect', 'submodule', 'filter-branch', 'rebase']],
  ['go', ['run', 'generate', 'tool']],
  ['uv', ['run', 'tool']],
  ['pipx', ['run']],
  ['poetry', ['run']],
  ['bundle', ['exec']],
  ['gem', ['exec']],
  ['conda', ['run']],
  ['rustup', ['run']],
  ['dotnet', ['exec']],
  ['brew', ['sh']],
]);

/**
 * Programs that run another program when one of these words is any of their arguments, not only the
 * first: `docker compose exec web sh`, `docker container exec c sh`.
 */
const CONTAINER_EXEC = ['exec', 'run', 'debug', 'attach', 'create'];
const PROGRAM_RUNNING_WORDS = new Map<string, readonly string[]>([
  ['docker', CONTAINER_EXEC],
  ['podman', CONTAINER_EXEC],
  ['nerdctl', CONTAINER_EXEC],
  ['docker-compose', ['exec', 'run', 'attach']],
  ['podman-compose', ['exec', 'run', 'attach']],
  ['kubectl', ['exec', 'run', 'debug', 'attach']],
  ['oc', ['exec', 'run', 'debug', 'attach', 'rsh']],
]);

interface RunningOptions {
  long: readonly string[];
  /** Letters of short forms, matched anywhere in a cluster (`-qu`). */
  short?: string;
}

/**
 * Options that make a grantable program (or `program subcommand`) run another one. Long options match
 * any abbreviation (`--compress-prog`), since getopt_long and git accept those.
 */

const PROGRAM_RUNNING_OPTIONS = new Map<string, RunningOptions>([
  ['git', { long: ['--upload-pack', '--receive-pack', '--exec', '--config', '--template'] }],
  ['git clone', { long: [], short: 'uc' }],
  ['sort', { long: ['--compress-program'] }],
  ['split', { long: ['--filter'] }],
  ['wget', { long: ['--use-askpass'] }],
  ['make', { long: ['--eval'], short: 'E' }],
  ['npm', { long: ['--script-shell'] }],
  ['pnpm', { long: ['--script-shell'] }],
]);

/** Characters a grantable program name may contain; anything else (quotes, spaces, `=`, `!`, ...) is refused. */
const PROGRAM_CHARACTERS = /^[\p{L}\p{N}._+\-/@%:,~]+$/u;
/** A subcommand or script name written plainly: no option, expansion, wildcard or `=`. */
const PLAIN_WORD = /^[\p{L}\p{N}_][\p{L}\p{N}._+\-:@/,%]*$/u;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

// ---------------------------------------------------------------------------------------------
// Tokens

type Separator = '\n' | ';' | '&' | '&&' | '||' | '|' | '|&';
/** Longest first, so that `>>` is not read as `>`. */
const REDIRECTION_OPERATORS = ['&>>', '&>', '>>', '>|', '>&', '<>', '<&', '>', '<'] as const;
type RedirectionOperator = (typeof REDIRECTION_OPERATORS)[number];

interface Word {
  /** After quote removal; expansions stay as written ("$HOME"). */
  text: string;
  /** As it appears in the line. */
  raw: string;
  /** The shell may turn it into something else: a `$` expansion, or an unquoted wildcard or brace. */
  expands: boolean;
}

type CommandToken = { kind: 'word'; word: Word } | { kind: 'redirection'; operator: RedirectionOperator; fd: string | null };
type Token = CommandToken | { kind: 'separator'; separator: Separator };

interface WordInProgress {
  start: number;
  text: string;
  expands: boolean;
}

/** Splits a line into words, separators and redirections; throws UnreadableCommandLine on anything outside the grammar. */
class CommandLineLexer {
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

// ---------------------------------------------------------------------------------------------
// From tokens to simple commands

const BINARY_SEPARATORS: ReadonlySet<Separator> = new Set(['&&', '||', '|', '|&']);

/** Groups tokens into simple commands; a separator with no command before it, or a dangling `&&`, is refused. */
function splitCommands(tokens: readonly Token[]): CommandToken[][] {
  const commands: CommandToken[][] = [];
  let current: CommandToken[] = [];
  let awaiting: Separator | null = null;
  for (const token of tokens) {
    if (token.kind !== 'separator') {
      current.push(token);
      continue;
    }
    if (current.length === 0) {
      if (token.separator === '\n') {
        continue;
      }
      throw unreadable(`it has an empty command before \`${token.separator}\``);
    }
    commands.push(current);
    current = [];
    awaiting = BINARY_SEPARATORS.has(token.separator) ? token.separator : null;
  }
  if (current.length > 0) {
    commands.push(current);
  } else if (awaiting !== null) {
    throw unreadable(`it ends with \`${awaiting}\``);
  }
  if (commands.length === 0) {
    throw unreadable(REASONS.empty);
  }
  return commands;
}

interface CommandParts {
  words: Word[];
  /** Targets of `<`: files the command reads. */
  inputs: Word[];
  redirectionRefusal: string | null;
}

function partsOf(tokens: readonly CommandToken[]): CommandParts {
  const words: Word[] = [];
  const inputs: Word[] = [];
  let redirectionRefusal: string | null = null;
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index];
    if (token.kind === 'word') {
      words.push(token.word);
      continue;
    }
    const target = tokens[index + 1];
    if (target?.kind !== 'word') {
      throw unreadable(`it has a redirection (\`${token.operator}\`) without a target`);
    }
    redirectionRefusal ??= refusalForRedirection(token.operator, token.fd, target.word);
    if (token.operator === '<') {
      inputs.push(target.word);
    }
    index += 1;
  }
  return { words, inputs, redirectionRefusal };
}

function isDevNull(target: Word): boolean {
  return !target.expands && target.text === '/dev/null';
}

/** `2>&1`, `>&2`, `<&0`, `>&-`: copying or closing a descriptor touches no file. */
function isFileDescriptor(target: Word): boolean {
  return !target.expands && /^(?:[0-9]+-?|-)$/.test(target.text);
}

/** Reading a file is fine, unless bash would open a connection for it (`< /dev/tcp/host/port`). */
function refusalForInput(target: Word): string | null {
  if (target.expands) {
    return `it reads from a file named by an expansion or wildcard (\`< ${target.text}\`)`;
  }
  if (/\/dev\/(?:tcp|udp)\//.test(target.text)) {
    return `it opens a network connection (\`< ${target.text}\`)`;
  }
  return null;
}

function refusalForRedirection(operator: RedirectionOperator, fd: string | null, target: Word): string | null {
  const written = `${fd ?? ''}${operator} ${target.text}`;
  switch (operator) {
    case '<':
      return refusalForInput(target);
    case '<&':
      return isFileDescriptor(target) ? null : `it redirects input from something other than a file descriptor (\`${written}\`)`;
    case '>&':
      return isFileDescriptor(target) || isDevNull(target) ? null : `it writes to a file (\`${written}\`)`;
    case '>':
    case '>>':
    case '>|':
    case '&>':
    case '&>>':
    case '<>':
      return isDevNull(target) ? null : `it writes to a file (\`${written}\`)`;
  }
}

// ---------------------------------------------------------------------------------------------
// Grant keys

type KeyVerdict = { key: string } | { refusal: string };

/** "bash", plus "python" for "/usr/bin/Python3.12": the names a program is looked up under. */
function familyNames(program: string): string[] {
  const name = (program.split('/').pop() ?? '').toLowerCase();
  const unversioned = name.replace(/-?[0-9][0-9.]*$/, '');
  return unversioned === name || unversioned === '' ? [name] : [name, unversioned];
}

function familyIn<T>(program: string, table: ReadonlySet<string> | ReadonlyMap<string, T>): string | undefined {
  return familyNames(program).find((name) => table.has(name));
}

function categoryRefusal(program: string): string | null {
  if (familyIn(program, RUNS_OTHER_COMMANDS) !== undefined) {
    return `\`${program}\` runs other commands`;
  }
  const told = familyIn(program, RUNS_COMMANDS_WHEN_TOLD);
  if (told !== undefined) {
    return `\`${program}\` can run other commands (${RUNS_COMMANDS_WHEN_TOLD.get(told) ?? ''})`;
  }
  if (familyIn(program, RUNS_CODE) !== undefined) {
    return `\`${program}\` runs code given to it`;
  }
  if (familyIn(program, CHANGES_SHELL_STATE) !== undefined) {
    return `\`${program}\` changes how later commands run`;
  }
  return null;
}

/** Why a program (after quote removal) can never be granted, or null. */
function programRefusal(program: string): string | null {
  if (program === '') {
    return 'the program name is empty';
  }
  if (program === '!') {
    return REASONS.negation;
  }
  if (program === '[') {
    return 'it uses a test expression ([ ... ]), which cannot be granted';
  }
  if (RESERVED_WORDS.has(program)) {
    return `it uses shell control syntax (\`${program}\`)`;
  }
  if (program.includes('$')) {
    return `the program is named by a variable (\`${program}\`)`;
  }
  if (/[*?[\]]/.test(program)) {
    return `the program name \`${program}\` uses a wildcard`;
  }
  if (/[{}]/.test(program)) {
    return `the program name \`${program}\` uses brace expansion`;
  }
  if (!PROGRAM_CHARACTERS.test(program)) {
    return `the program name ${JSON.stringify(program)} has characters that cannot be granted`;
  }
  return categoryRefusal(program) ?? workspaceProgramRefusal(program);
}

/** `./build.sh`, `scripts/x`: the agent can rewrite the file, so a grant on its name would approve anything. */
function workspaceProgramRefusal(program: string): string | null {
  return program.includes('/') && !program.startsWith('/') ? `\`${program}\` is a file in the workspace the agent can change` : null;
}

function listedFor(program: string, table: ReadonlyMap<string, readonly string[]>): readonly string[] {
  const family = familyIn(program, table);
  return family === undefined ? [] : (table.get(family) ?? []);
}

function subcommandRefusal(program: string, subcommand: string): string | null {
  const runsPrograms = [PROGRAM_RUNNING_SUBCOMMANDS, PROGRAM_RUNNING_WORDS].some((table) => listedFor(program, table).includes(subcommand));
  return runsPrograms ? `\`${program} ${subcommand}\` runs other programs` : null;
}

/**
 * Why `program` (optionally with `subcommand`) can never be granted or listed as safe, or null.
 * Shared with the safe-command list so that both refuse the same programs.
 */
export function ungrantableReason(program: string, subcommand?: string): string | null {
  return programRefusal(program) ?? (subcommand === undefined ? null : subcommandRefusal(program, subcommand));
}

function display(program: string, args: readonly Word[]): string {
  const text = [program, ...args.map((arg) => arg.text)].join(' ');
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** A subcommand or script name must be a plain word for the key to mean one thing. */
function plainWordRefusal(shown: string, word: Word, what: string): string | null {
  if (word.text.startsWith('-')) {
    return `\`${shown}\`: options before the ${what} cannot be granted`;
  }
  if (word.expands || !PLAIN_WORD.test(word.text)) {
    return `\`${shown}\`: the ${what} \`${word.text}\` is not a plain word`;
  }
  return null;
}

function variableOptionRefusal(program: string, args: readonly Word[]): string | null {
  const family = familyIn(program, VARIABLE_OPTIONS);
  const options = family === undefined ? undefined : VARIABLE_OPTIONS.get(family);
  if (options === undefined) {
    return null;
  }
  if (args.some((arg) => arg.expands)) {
    return `\`${program}\` with arguments that expand could set shell variables`;
  }
  const option = args.find((arg) => /^-[^-]/.test(arg.text) && [...options.letters].some((letter) => arg.text.includes(letter)));
  return option === undefined ? null : `\`${program} ${option.text}\` ${options.effect}`;
}

function runsScript(program: string, subcommand: string): boolean {
  const family = familyIn(program, SCRIPT_SUBCOMMANDS);
  return family !== undefined && (SCRIPT_SUBCOMMANDS.get(family) ?? []).includes(subcommand);
}

/** `npm run build`: the script name is part of the key, since each script does something else. */
function scriptKey(prefix: string, script: Word | undefined, shown: string): KeyVerdict {
  if (script === undefined) {
    return { refusal: `\`${prefix}\` without a script name cannot be granted` };
  }
  const refusal = plainWordRefusal(shown, script, 'script name');
  return refusal === null ? { key: `${prefix} ${script.text}` } : { refusal };
}

function subcommandKey(program: string, args: readonly Word[]): KeyVerdict {
  if (familyIn(program, SUBCOMMAND_PROGRAMS) === undefined) {
    return { key: program };
  }
  const subcommand: Word | undefined = args[0];
  if (subcommand === undefined) {
    return { refusal: `\`${program}\` without a subcommand cannot be granted` };
  }
  const shown = display(program, args);
  const refusal = plainWordRefusal(shown, subcommand, 'subcommand') ?? subcommandRefusal(program, subcommand.text);
  if (refusal !== null) {
    return { refusal };
  }
  const prefix = `${program} ${subcommand.text}`;
  return runsScript(program, subcommand.text) ? scriptKey(prefix, args[1], shown) : { key: prefix };
}

/** `docker compose exec web sh`: a word anywhere among the arguments that makes the program run another one. */
function programRunningWordRefusal(program: string, args: readonly Word[]): string | null {
  const words = listedFor(program, PROGRAM_RUNNING_WORDS);
  const found = args.find((arg) => words.includes(arg.text));
  return found === undefined ? null : `\`${display(program, args)}\` runs other programs (\`${found.text}\`)`;
}

/** `sort --compress-prog=sh`, `git clone -u 'sh -c ...'`: an option that makes the program run another one. */
function programRunningOptionRefusal(program: string, args: readonly Word[]): string | null {
  const subcommand = args[0]?.text ?? '';
  for (const name of familyNames(program)) {
    const scopes: Array<[string, RunningOptions | undefined]> = [
      [program, PROGRAM_RUNNING_OPTIONS.get(name)],
      [`${program} ${subcommand}`, PROGRAM_RUNNING_OPTIONS.get(`${name} ${subcommand}`)],
    ];
    for (const [shown, options] of scopes) {
      const found = options === undefined ? undefined : args.find((arg) => isOptionOf(arg.text, options));
      if (found !== undefined) {
        return `\`${shown} ${found.text.split('=')[0]}\` runs other programs`;
      }
    }
  }
  return null;
}

function isOptionOf(arg: string, options: RunningOptions): boolean {
  if (arg.startsWith('--')) {
    const name = arg.split('=')[0];
    return name.length > 2 && options.long.some((option) => option.startsWith(name));
  }
  return /^-[^-]/.test(arg) && [...(options.short ?? '')].some((letter) => arg.slice(1).includes(letter));
}

function grantKey(programWord: Word, args: readonly Word[]): KeyVerdict {
  const refusal = ASSIGNMENT.test(programWord.raw)
    ? REASONS.assignment
    : (programRefusal(programWord.text) ?? variableOptionRefusal(programWord.text, args));
  if (refusal !== null) {
    return { refusal };
  }
  const verdict = subcommandKey(programWord.text, args);
  if (!('key' in verdict)) {
    return verdict;
  }
  const later = programRunningWordRefusal(programWord.text, args) ?? programRunningOptionRefusal(programWord.text, args);
  return later === null ? verdict : { refusal: later };
}

// ---------------------------------------------------------------------------------------------
// Confinement: whether the arguments stay inside the working folder

/** `--file=/etc/passwd`, `host:/path`, `file:///etc`, `a,~/x`: a value that starts outside, after a separator. */
const OUTSIDE_AFTER_SEPARATOR = /[=:@,][/~]/;
/** `-f/etc/passwd`, `-C..`: a short option whose attached value starts outside. */
const OUTSIDE_AFTER_SHORT_OPTION = /^-[\p{L}\p{N}]+(?:[/~]|\.\.(?:\/|$))/u;
const GLOB_CHARACTERS = /[*?[]/;

/**
 * Whether an argument (after quote removal) could name something outside the working folder. Quoting
 * is ignored on purpose: a quoted `*` or `{` only makes the word mean less than it is checked for.
 */
function reachesOutside(text: string): boolean {
  if (text.includes('$') || /^[/~]/.test(text) || OUTSIDE_AFTER_SEPARATOR.test(text) || OUTSIDE_AFTER_SHORT_OPTION.test(text)) {
    return true;
  }
  if (text.includes('/..') || text.includes('../')) {
    return true;
  }
  const parts = text.split(/[/=:@,]/);
  // `..`, `--dir=..`; `.*` and `.?` match `..` when expanded (and, for safety, any pattern starting with `[`).
  if (parts.some((part) => part === '..' || (/^[.[]/.test(part) && GLOB_CHARACTERS.test(part)))) {
    return true;
  }
  // Brace expansion joins and removes characters (`{.,}./x` is `../x`, `{,/}etc` is `/etc`); without
  // `.`, `/` and `~` it can form none of the above.
  return /\{[\s\S]*\}/.test(text) && /[./~]/.test(text);
}

function isConfined(args: readonly Word[], inputs: readonly Word[]): boolean {
  return args.every((arg) => !reachesOutside(arg.text)) && inputs.every((input) => isDevNull(input) || !reachesOutside(input.text));
}

interface JudgedCommand {
  command: SimpleCommand | null;
  refusal: string | null;
}

function judgeCommand({ words, inputs, redirectionRefusal }: CommandParts): JudgedCommand {
  const [programWord, ...argumentWords] = words;
  if (programWord === undefined) {
    return { command: null, refusal: REASONS.onlyRedirections };
  }
  const verdict = grantKey(programWord, argumentWords);
  const key = 'key' in verdict ? verdict.key : null;
  const command: SimpleCommand = {
    program: programWord.text,
    args: argumentWords.map((word) => word.text),
    key,
    confined: isConfined(argumentWords, inputs),
  };
  return { command, refusal: 'refusal' in verdict ? verdict.refusal : redirectionRefusal };
}

/**
 * What in a line could make it read differently on a screen than it runs: C0 controls other than tab
 * and newline, DEL and C1 controls (a carriage return or an escape sequence can hide text on a
 * terminal), or bidirectional text controls (which reorder what is shown).
 */
export function disguisingCharacters(line: string): 'control' | 'bidi' | null {
  for (const char of line) {
    const code = char.codePointAt(0) ?? 0;
    if ((code <= 0x1f && char !== '\t' && char !== '\n') || (code >= 0x7f && code <= 0x9f)) {
      return 'control';
    }
  }
  return BIDI_CONTROLS.test(line) ? 'bidi' : null;
}

function readCommandParts(line: string): CommandParts[] {
  const disguise = disguisingCharacters(line);
  if (disguise !== null) {
    throw unreadable(disguise === 'control' ? REASONS.controlCharacters : REASONS.bidiControls);
  }
  return splitCommands(new CommandLineLexer(line).tokenize()).map(partsOf);
}

/** Which simple commands a `/bin/sh -c` line runs, and whether it can be granted for reuse (see the top of this file). */
export function analyseCommandLine(line: string): CommandLineAnalysis {
  let parts: CommandParts[];
  try {
    parts = readCommandParts(line);
  } catch (error) {
    if (error instanceof UnreadableCommandLine) {
      return { reusable: false, reason: error.reason, commands: [] };
    }
    throw error;
  }
  const judged = parts.map(judgeCommand);
  const commands = judged.flatMap((judgement) => (judgement.command === null ? [] : [judgement.command]));
  const refusal = judged.find((judgement) => judgement.refusal !== null)?.refusal ?? null;
  return refusal === null ? { reusable: true, commands } : { reusable: false, reason: refusal, commands };
}

/** A short human description of what a set of grant keys allows, e.g. "`ls` and `git status` (any arguments inside the workspace)". */
export function describeCommandKeys(keys: string[]): string {
  const quoted = [...new Set(keys)].map((key) => `\`${key}\``);
  if (quoted.length === 0) {
    return 'no commands';
  }
  const listed = quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}`;
  return `${listed} (any arguments inside the workspace)`;
}
