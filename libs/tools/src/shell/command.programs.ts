/** Which programs can be granted, and the grant key of a command (see command-line.ts). */

import { REASONS } from './command.reasons';
import type { Word } from './command.scanner';

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

export interface RunningOptions {
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

// ---------------------------------------------------------------------------------------------
// Grant keys

export type KeyVerdict = { key: string } | { refusal: string };

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
export function programRefusal(program: string): string | null {
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

export function subcommandRefusal(program: string, subcommand: string): string | null {
  const runsPrograms = [PROGRAM_RUNNING_SUBCOMMANDS, PROGRAM_RUNNING_WORDS].some((table) => listedFor(program, table).includes(subcommand));
  return runsPrograms ? `\`${program} ${subcommand}\` runs other programs` : null;
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

/**
 * `sort --compress-prog=sh`, `git clone -u 'sh -c ...'`: an option that makes the program run another
 * one. A wildcard or brace among the options of such a program may expand to one (`*` and a file
 * named `--compress-program=sh`, made by an earlier command), so it is refused too, unless it follows `--`.
 */
function programRunningOptionRefusal(program: string, args: readonly Word[]): string | null {
  const subcommand = args[0]?.text ?? '';
  for (const name of familyNames(program)) {
    const scopes: Array<[string, RunningOptions | undefined]> = [
      [program, PROGRAM_RUNNING_OPTIONS.get(name)],
      [`${program} ${subcommand}`, PROGRAM_RUNNING_OPTIONS.get(`${name} ${subcommand}`)],
    ];
    for (const [shown, options] of scopes) {
      if (options === undefined) {
        continue;
      }
      const found = args.find((arg) => isOptionOf(arg.text, options));
      if (found !== undefined) {
        return `\`${shown} ${found.text.split('=')[0]}\` runs other programs`;
      }
      const expanding = optionsOf(args).find((arg) => arg.expands && mayBeOption(arg.text));
      if (expanding !== undefined) {
        return `\`${shown}\` can be told to run other programs, and \`${expanding.text}\` may expand to such an option (put it after \`--\`)`;
      }
    }
  }
  return null;
}

/** A word that, once expanded, may start with `-`: `*`, `{--a,b}`, `--comp*` (not `notes/*`). */
export function mayBeOption(text: string): boolean {
  return /^[-*?[{]/.test(text);
}

/** The arguments a program may read as options: those before a plain `--`. */
function optionsOf(args: readonly Word[]): readonly Word[] {
  const end = args.findIndex((arg) => arg.text === '--' && !arg.expands);
  return end < 0 ? args : args.slice(0, end);
}

/** `arg` is one of `options`: a long one or its abbreviation (`--compress-prog`), or a short letter anywhere in a cluster. */
export function isOptionOf(arg: string, options: RunningOptions): boolean {
  if (arg.startsWith('--')) {
    const name = arg.split('=')[0];
    return name.length > 2 && options.long.some((option) => option.startsWith(name));
  }
  return /^-[^-]/.test(arg) && [...(options.short ?? '')].some((letter) => arg.slice(1).includes(letter));
}

export function grantKey(programWord: Word, args: readonly Word[]): KeyVerdict {
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
