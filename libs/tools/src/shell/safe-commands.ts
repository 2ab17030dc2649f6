import type { SafeCommandInEffect, SafeCommandSource } from '@parley/contracts';
import { ungrantableReason, type SimpleCommand } from './command-line';
import { isOptionOf, mayBeOption, type RunningOptions } from './command.programs';

/** A program, optionally with one subcommand, that needs no approval whatever its arguments. */
export interface SafeCommandEntry {
  program: string;
  subcommand?: string;
}

export type { SafeCommandInEffect, SafeCommandSource } from '@parley/contracts';

/** Bare program names only: a path or a shell metacharacter would let the entry mean something else. */
const ENTRY_PROGRAM = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;
const ENTRY_SUBCOMMAND = /^[A-Za-z0-9][A-Za-z0-9._+:-]*$/;

/** Parses "cat" or "git status"; the error names the entry and what is wrong with it. */
export function parseSafeCommandEntry(text: string): { ok: true; entry: SafeCommandEntry } | { ok: false; error: string } {
  const fail = (problem: string): { ok: false; error: string } => ({ ok: false, error: `safe command ${JSON.stringify(text)} ${problem}` });
  const trimmed = text.trim();
  if (trimmed === '') {
    return fail('is empty');
  }
  const words = trimmed.split(/\s+/);
  if (words.length > 2) {
    return fail('has more than a program and one subcommand');
  }
  const [program, subcommand] = words;
  if (program.includes('/')) {
    return fail('must be a bare program name, without "/"');
  }
  if (!ENTRY_PROGRAM.test(program)) {
    return fail(`has a program name with characters that are not allowed (use letters, digits, ".", "_", "+" and "-")`);
  }
  if (subcommand !== undefined && !ENTRY_SUBCOMMAND.test(subcommand)) {
    return fail(`has a subcommand with characters that are not allowed (use letters, digits, ".", "_", "+", ":" and "-")`);
  }
  const refusal = ungrantableReason(program, subcommand);
  if (refusal !== null) {
    return fail(`cannot be safe: ${refusal}`);
  }
  return { ok: true, entry: subcommand === undefined ? { program } : { program, subcommand } };
}

/**
 * The one rule for this list: nothing on it can write a file, run another program or open a network
 * connection, under any flag or argument. That leaves out, for example: find (-exec, -delete), sed
 * (-i, `w`, `e`), awk (system()), xargs, env, sort (-o), uniq (writes its second operand), tee,
 * tree (-o), file (-C), date (-s), hostname (sets it), less and more (shell escapes), diff
 * (--paginate runs `pr`), git (status may rewrite the index; diff and log have --output), curl, wget.
 * Shell builtins count too: `printf -v` sets a variable, which is why the line scanner refuses it.
 */
export const DEFAULT_SAFE_COMMANDS: ReadonlyArray<{ entry: string; note: string }> = [
  { entry: 'ls', note: 'lists directories; no option writes or runs anything' },
  { entry: 'cat', note: 'prints files' },
  { entry: 'head', note: 'prints the start of files' },
  { entry: 'tail', note: 'prints the end of files; -f only keeps reading' },
  { entry: 'wc', note: 'counts lines, words and bytes; not with --files0-from, which takes file names from its input' },
  { entry: 'pwd', note: 'prints the working directory' },
  { entry: 'echo', note: 'prints its arguments' },
  { entry: 'printf', note: 'formats its arguments; the scanner refuses -v, which would set a variable' },
  { entry: 'grep', note: 'searches text; it has no option that writes a file or runs a program' },
  { entry: 'cut', note: 'prints selected fields of lines' },
  { entry: 'tr', note: 'translates characters from standard input' },
  { entry: 'nl', note: 'numbers lines' },
  { entry: 'rev', note: 'reverses lines' },
  { entry: 'basename', note: 'strips directories from a path' },
  { entry: 'dirname', note: 'strips the last part of a path' },
  { entry: 'realpath', note: 'resolves a path' },
  { entry: 'readlink', note: 'prints where a symbolic link points' },
  { entry: 'stat', note: 'prints file metadata' },
  { entry: 'du', note: 'reports disk usage; not with --files0-from, which takes file names from its input' },
  { entry: 'df', note: 'reports free disk space' },
  { entry: 'whoami', note: 'prints the user name' },
  { entry: 'id', note: 'prints user and group ids' },
  { entry: 'uname', note: 'prints system information; unlike hostname it cannot change it' },
  { entry: 'true', note: 'does nothing, successfully' },
  { entry: 'false', note: 'does nothing, unsuccessfully' },
  { entry: 'sha256sum', note: 'prints checksums; not -c, which checks files named in a list' },
  { entry: 'md5sum', note: 'prints checksums; not -c, which checks files named in a list' },
  { entry: 'cmp', note: 'compares two files byte by byte' },
  { entry: 'comm', note: 'compares two sorted files line by line' },
  { entry: 'paste', note: 'merges lines of files' },
  { entry: 'fold', note: 'wraps lines' },
  { entry: 'expand', note: 'converts tabs to spaces' },
  { entry: 'od', note: 'dumps files in octal, hex or other formats' },
  { entry: 'seq', note: 'prints a sequence of numbers' },
  { entry: 'which', note: 'finds a program on the PATH without running it' },
  { entry: 'printenv', note: 'prints environment variables (which may include secrets the agent then sees)' },
];

function describeSource(source: SafeCommandSource): string {
  if (source === 'default') {
    return 'the default safe commands';
  }
  if (source === 'global') {
    return 'the global safe commands (PARLEY_SAFE_COMMANDS)';
  }
  return `the safe_commands of agent "${source.slice('agent:'.length)}"`;
}

/** "git  status" → "git status"; throws naming the entry and where it came from when it is invalid. */
function canonicalEntry(text: string, source: SafeCommandSource): string {
  const parsed = parseSafeCommandEntry(text);
  if (!parsed.ok) {
    throw new Error(`invalid entry in ${describeSource(source)}: ${parsed.error}`);
  }
  const { program, subcommand } = parsed.entry;
  return subcommand === undefined ? program : `${program} ${subcommand}`;
}

/** Defaults first, then global, then agent entries; a duplicate keeps its first source. Throws on an invalid entry. */
export function safeCommandsInEffect(input: {
  global: readonly string[];
  agent?: { name: string; entries: readonly string[] };
}): SafeCommandInEffect[] {
  const inEffect: SafeCommandInEffect[] = [];
  const seen = new Set<string>();
  const add = (text: string, source: SafeCommandSource, note?: string): void => {
    const entry = canonicalEntry(text, source);
    if (!seen.has(entry)) {
      seen.add(entry);
      inEffect.push(note === undefined ? { entry, source } : { entry, source, note });
    }
  };
  DEFAULT_SAFE_COMMANDS.forEach(({ entry, note }) => add(entry, 'default', note));
  input.global.forEach((text) => add(text, 'global'));
  const agent = input.agent;
  agent?.entries.forEach((text) => add(text, `agent:${agent.name}`));
  return inEffect;
}

/**
 * Options with which a safe program takes file names from its input or from a file (`printf /etc/shadow
 * | wc --files0-from=-`, a checksum list for `sha256sum -c`), where the confinement of its arguments
 * cannot see them: it would tell whether files outside the workspace exist, their sizes and counts.
 */
const NAMES_FROM_INPUT = new Map<string, RunningOptions>([
  ['wc', { long: ['--files0-from'] }],
  ['du', { long: ['--files0-from'] }],
  ['sha256sum', { long: ['--check'], short: 'c' }],
  ['md5sum', { long: ['--check'], short: 'c' }],
]);

/** With such an option, or an argument that may expand to one (a file named `--files0-from=-`), a command is not safe. */
function takesNamesFromInput(command: SimpleCommand): boolean {
  const options = NAMES_FROM_INPUT.get(command.program);
  if (options === undefined) {
    return false;
  }
  const end = command.args.indexOf('--');
  return (end < 0 ? command.args : command.args.slice(0, end)).some((arg) => isOptionOf(arg, options) || (mayBeOption(arg) && /[*?[{]/.test(arg)));
}

function entryCovers(entry: string, command: SimpleCommand): boolean {
  const [program, subcommand] = entry.split(' ');
  return program === command.program && (subcommand === undefined || subcommand === command.args[0]);
}

/**
 * True when an entry covers this command: same program, and the entry's subcommand (if any) as the
 * first argument, with every argument inside the workspace (`cat notes/a.md`, not `cat /proc/1/environ`).
 * A command written with a path (`/tmp/ls`, `./ls`) is never covered, since the entry names the
 * program found on the PATH.
 */
export function isSafeCommand(command: SimpleCommand, entries: readonly SafeCommandInEffect[]): boolean {
  if (command.key === null || !command.confined || command.program.includes('/') || takesNamesFromInput(command)) {
    return false;
  }
  return entries.some((entry) => entryCovers(entry.entry, command));
}
