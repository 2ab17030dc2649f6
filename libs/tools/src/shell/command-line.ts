/**
 * Reads a `/bin/sh -c` command line just well enough to say which simple commands it runs, so that an
 * approval can be granted per command ("ls", "git status") instead of per tool.
 *
 * This is a hand-written allow-list scanner on purpose, not a shell parser library: a grant approves
 * future commands without asking, so every construct accepted here is one we have reasoned about.
 * Anything outside the small grammar in command.scanner.ts and command.parts.ts (substitutions, heredocs, grouping, control flow, file
 * writes, ...) makes the line non-reusable, which only means that the person is asked again.
 * /bin/sh may be bash, dash or another shell, so bash-only syntax is treated as live everywhere.
 * Each command also says whether its arguments stay inside the working folder (`confined`): a grant
 * or a safe command names a program, and must not carry it to `/etc` or `~/.ssh`.
 */

import { isConfined } from './command.confinement';
import { partsOf, splitCommands, type CommandParts } from './command.parts';
import { grantKey, programRefusal, subcommandRefusal } from './command.programs';
import { REASONS, UnreadableCommandLine, unreadable } from './command.reasons';
import { CommandLineLexer } from './command.scanner';

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

const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * Why `program` (optionally with `subcommand`) can never be granted or listed as safe, or null.
 * Shared with the safe-command list so that both refuse the same programs.
 */
export function ungrantableReason(program: string, subcommand?: string): string | null {
  return programRefusal(program) ?? (subcommand === undefined ? null : subcommandRefusal(program, subcommand));
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
