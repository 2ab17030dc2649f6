/** Grouping tokens into simple commands, and judging their redirections (see command-line.ts). */

import { REASONS, unreadable } from './command.reasons';
import type { CommandToken, RedirectionOperator, Separator, Token, Word } from './command.scanner';

// ---------------------------------------------------------------------------------------------
// From tokens to simple commands

const BINARY_SEPARATORS: ReadonlySet<Separator> = new Set(['&&', '||', '|', '|&']);

/** Groups tokens into simple commands; a separator with no command before it, or a dangling `&&`, is refused. */
export function splitCommands(tokens: readonly Token[]): CommandToken[][] {
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

export interface CommandParts {
  words: Word[];
  /** Targets of `<`: files the command reads. */
  inputs: Word[];
  redirectionRefusal: string | null;
}

export function partsOf(tokens: readonly CommandToken[]): CommandParts {
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

export function isDevNull(target: Word): boolean {
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
