import { analyseCommandLine, type SimpleCommand } from './command-line';
import {
  DEFAULT_SAFE_COMMANDS,
  isSafeCommand,
  parseSafeCommandEntry,
  safeCommandsInEffect,
  type SafeCommandInEffect,
} from './safe-commands';

const errorOf = (text: string): string => {
  const parsed = parseSafeCommandEntry(text);
  if (parsed.ok) {
    throw new Error(`expected ${JSON.stringify(text)} to be refused`);
  }
  return parsed.error;
};

const onlyCommand = (line: string): SimpleCommand => {
  const [command] = analyseCommandLine(line).commands;
  return command;
};

const DEFAULTS = safeCommandsInEffect({ global: [] });

/** Whether safe commands alone let a line run without asking: it is reusable and every command on it is safe. */
const coveredBySafe =
  (entries: readonly SafeCommandInEffect[] = DEFAULTS) =>
  (line: string): boolean => {
    const analysis = analyseCommandLine(line);
    return analysis.reusable && analysis.commands.length > 0 && analysis.commands.every((command) => isSafeCommand(command, entries));
  };

describe('parseSafeCommandEntry', () => {
  it.each([
    ['cat', { program: 'cat' }],
    ['git status', { program: 'git', subcommand: 'status' }],
    ['  git   status ', { program: 'git', subcommand: 'status' }],
    ['npm test', { program: 'npm', subcommand: 'test' }],
    ['sha256sum', { program: 'sha256sum' }],
    ['g++', { program: 'g++' }],
    ['pnpm test:unit', { program: 'pnpm', subcommand: 'test:unit' }],
  ])('%j → %j', (text, entry) => {
    expect(parseSafeCommandEntry(text)).toEqual({ ok: true, entry });
  });

  it.each([
    ['', 'safe command "" is empty'],
    ['   ', 'safe command "   " is empty'],
    ['git status --short', 'safe command "git status --short" has more than a program and one subcommand'],
    ['/bin/ls', 'safe command "/bin/ls" must be a bare program name, without "/"'],
    ['./build.sh', 'safe command "./build.sh" must be a bare program name, without "/"'],
    ['bash', 'safe command "bash" cannot be safe: `bash` runs other commands'],
    ['sudo', 'safe command "sudo" cannot be safe: `sudo` runs other commands'],
    ['xargs', 'safe command "xargs" cannot be safe: `xargs` runs other commands'],
    ['env', 'safe command "env" cannot be safe: `env` runs other commands'],
    ['npx', 'safe command "npx" cannot be safe: `npx` runs other commands'],
    ['python3', 'safe command "python3" cannot be safe: `python3` runs code given to it'],
    ['export', 'safe command "export" cannot be safe: `export` changes how later commands run'],
    ['npm exec', 'safe command "npm exec" cannot be safe: `npm exec` runs other programs'],
    ['if', 'safe command "if" cannot be safe: it uses shell control syntax (`if`)'],
    ['find', 'safe command "find" cannot be safe: `find` can run other commands (-exec, -ok; -delete and -fprint change files)'],
    ['vim', 'safe command "vim" cannot be safe: `vim` can run other commands (:!, -c)'],
    ['sed', 'safe command "sed" cannot be safe: `sed` runs code given to it'],
    ['R', 'safe command "R" cannot be safe: `R` runs code given to it'],
    ['toybox', 'safe command "toybox" cannot be safe: `toybox` runs other commands'],
    ['git grep', 'safe command "git grep" cannot be safe: `git grep` runs other programs'],
    ['docker attach', 'safe command "docker attach" cannot be safe: `docker attach` runs other programs'],
    ['kubectl debug', 'safe command "kubectl debug" cannot be safe: `kubectl debug` runs other programs'],
  ])('refuses %j', (text, error) => {
    expect(errorOf(text)).toBe(error);
  });

  it.each(['ls;rm', 'ls|sh', '$CMD', 'l*', 'ls&', '.', '-ls', "'ls'", 'ls>f', 'l\\s'])('refuses %j for its characters', (text) => {
    expect(errorOf(text)).toMatch(/has a program name with characters that are not allowed/);
  });

  it.each(['git -c', 'git $X', 'git st*', 'git a=b', 'git `x`'])('refuses %j for its subcommand', (text) => {
    expect(errorOf(text)).toMatch(/has a subcommand with characters that are not allowed/);
  });
});

describe('DEFAULT_SAFE_COMMANDS', () => {
  it('holds exactly the reviewed programs', () => {
    expect(DEFAULT_SAFE_COMMANDS.map((command) => command.entry)).toEqual([
      'ls', 'cat', 'head', 'tail', 'wc', 'pwd', 'echo', 'printf', 'grep', 'cut', 'tr', 'nl', 'rev', 'basename', 'dirname',
      'realpath', 'readlink', 'stat', 'du', 'df', 'whoami', 'id', 'uname', 'true', 'false', 'sha256sum', 'md5sum', 'cmp',
      'comm', 'paste', 'fold', 'expand', 'od', 'seq', 'which', 'printenv',
    ]);
  });

  it.each(DEFAULT_SAFE_COMMANDS.map((command) => [command.entry, command.note]))('%s parses, has a note and is grantable', (entry, note) => {
    expect(parseSafeCommandEntry(entry)).toEqual({ ok: true, entry: { program: entry } });
    expect(note.length).toBeGreaterThan(0);
    expect(analyseCommandLine(`${entry} x`)).toEqual({ reusable: true, commands: [{ program: entry, args: ['x'], key: entry, confined: true }] });
  });

  it.each(['find', 'sed', 'awk', 'xargs', 'env', 'sort', 'uniq', 'tee', 'tree', 'file', 'date', 'hostname', 'less', 'more', 'git', 'curl', 'wget', 'diff'])(
    'leaves out %s, which can write, run or connect under some flag',
    (program) => {
      expect(DEFAULT_SAFE_COMMANDS.some((command) => command.entry.split(' ')[0] === program)).toBe(false);
    },
  );
});

describe('safeCommandsInEffect', () => {
  it('lists the defaults first, each with its note', () => {
    expect(DEFAULTS).toEqual(DEFAULT_SAFE_COMMANDS.map(({ entry, note }) => ({ entry, source: 'default', note })));
  });

  it('adds global entries, then agent entries, in their own spelling', () => {
    const inEffect = safeCommandsInEffect({ global: ['git  status', 'npm test'], agent: { name: 'coder', entries: ['make build'] } });
    expect(inEffect.slice(DEFAULT_SAFE_COMMANDS.length)).toEqual([
      { entry: 'git status', source: 'global' },
      { entry: 'npm test', source: 'global' },
      { entry: 'make build', source: 'agent:coder' },
    ]);
  });

  it('keeps the first source of a duplicate', () => {
    const inEffect = safeCommandsInEffect({ global: ['cat', 'git status', 'git status'], agent: { name: 'coder', entries: ['git status', ' ls '] } });
    expect(inEffect.filter((command) => command.entry === 'cat')).toEqual([expect.objectContaining({ source: 'default' })]);
    expect(inEffect.filter((command) => command.entry === 'ls')).toEqual([expect.objectContaining({ source: 'default' })]);
    expect(inEffect.filter((command) => command.entry === 'git status')).toEqual([{ entry: 'git status', source: 'global' }]);
    expect(inEffect).toHaveLength(DEFAULT_SAFE_COMMANDS.length + 1);
  });

  it('throws naming the entry and the global source', () => {
    expect(() => safeCommandsInEffect({ global: ['cat', 'bash'] })).toThrow(
      'invalid entry in the global safe commands (PARLEY_SAFE_COMMANDS): safe command "bash" cannot be safe: `bash` runs other commands',
    );
  });

  it('throws naming the entry and the agent', () => {
    expect(() => safeCommandsInEffect({ global: [], agent: { name: 'coder', entries: ['/bin/ls'] } })).toThrow(
      'invalid entry in the safe_commands of agent "coder": safe command "/bin/ls" must be a bare program name, without "/"',
    );
  });
});

describe('isSafeCommand', () => {
  const entries = safeCommandsInEffect({ global: ['git status', 'make'] });

  it.each([
    ['cat a.txt', true],
    ['ls -la', true],
    ['git status --short', true],
    ['git push', false],
    ['git', false],
    ['make build', true],
    ['/bin/cat a.txt', false],
    ['./cat', false],
    ['CAT a', false],
    ['sort a', false],
    ['printf -v PATH x', false],
    ['grep -r x .', true],
    ['cat notes/a.md', true],
    ['wc -l notes/*.md', true],
    ['cat /proc/1/environ', false],
    ['cat /proc/$PPID/environ', false],
    ['ls ../other', false],
    ['ls ..', false],
    ['cat ~/.ssh/id_rsa', false],
    ['head --file=/etc/passwd', false],
    ['head -n1 < /etc/passwd', false],
    ['echo $HOME', false],
    ['git status ../other', false],
    // File names taken from the input or a list, which the arguments' confinement cannot see.
    ['wc --files0-from=-', false],
    ['du -b --files0=list', false],
    ['sha256sum -c sums.txt', false],
    ['md5sum --check sums.txt', false],
    ['wc *', false],
    ['wc --files0*', false],
    ['wc -l -- *', true],
    ['sha256sum a.txt', true],
  ])('%j → %s', (line, safe) => {
    expect(isSafeCommand(onlyCommand(line), entries)).toBe(safe);
  });

  it('never covers a program written with a path, even when it names a listed program', () => {
    const command: SimpleCommand = { program: 'bin/ls', args: [], key: 'bin/ls', confined: true };
    expect(isSafeCommand(command, [{ entry: 'bin/ls', source: 'global' }])).toBe(false);
  });

  it('never covers a command that is not confined to the workspace, nor one without a key', () => {
    const cat: SimpleCommand = { program: 'cat', args: ['x'], key: 'cat', confined: true };
    expect(isSafeCommand(cat, DEFAULTS)).toBe(true);
    expect(isSafeCommand({ ...cat, confined: false }, DEFAULTS)).toBe(false);
    expect(isSafeCommand({ ...cat, key: null }, DEFAULTS)).toBe(false);
  });
});

describe('safe commands on whole lines (analyseCommandLine + isSafeCommand)', () => {
  it.each([
    ['cat a | grep x | wc -l', true],
    ['ls && pwd; echo done', true],
    ['cat a 2>/dev/null', true],
    ['cat a | sort', false],
    ['cat a > b', false],
    ['cat "$(ls)"', false],
    ['echo x | tee f', false],
    ['printf -v PATH /tmp; ls', false],
    // The path comes through the pipe, out of the arguments' sight.
    ['printf %.0s/proc/1/environ | du -b --files0-from=-', false],
    ["printf '\\057etc\\057shadow' | wc --files0-from=-", false],
    ["printf 'abc  /etc/hostname' | sha256sum -c", false],
  ])('with the defaults, %j → %s', (line, covered) => {
    expect(coveredBySafe()(line)).toBe(covered);
  });

  it('covers a line only when every command on it is safe', () => {
    const analysis = analyseCommandLine('ls && npm test');
    expect(analysis.reusable).toBe(true);
    expect(analysis.commands.map((command) => isSafeCommand(command, DEFAULTS))).toEqual([true, false]);
    expect(coveredBySafe(safeCommandsInEffect({ global: ['npm test'] }))('ls && npm test')).toBe(true);
    expect(coveredBySafe(safeCommandsInEffect({ global: ['npm test'] }))('ls && npm test && npm publish')).toBe(false);
  });

  it('a safe command on a line that is not reusable still leaves the line uncovered', () => {
    const analysis = analyseCommandLine('ls > f');
    expect(analysis.reusable).toBe(false);
    expect(isSafeCommand(analysis.commands[0], DEFAULTS)).toBe(true);
    expect(coveredBySafe()('ls > f')).toBe(false);
  });

  it.each(['', '   ', '\n'])('an empty line %j is not reusable, so nothing covers it', (line) => {
    expect(analyseCommandLine(line)).toEqual({ reusable: false, reason: 'the command line is empty', commands: [] });
    expect(coveredBySafe()(line)).toBe(false);
  });

  it.each([
    ['cat /proc/1/environ', false],
    ['cat notes/a.md | grep -r x .', true],
    ['grep -r x .', true],
    ['ls ../other', false],
    ['cat notes/a.md && cat ~/.ssh/id_rsa', false],
    ['find . -name x', false],
    ['./build.sh', false],
  ])('with the defaults, outside the workspace: %j → %s', (line, covered) => {
    expect(coveredBySafe()(line)).toBe(covered);
  });

  describe('bypass attempts when `ls` is a safe command', () => {
    const coveredByLs = coveredBySafe(safeCommandsInEffect({ global: [] }).filter((command) => command.entry === 'ls'));

    it.each([
      'ls; rm -rf /',
      'ls && rm x',
      'ls || rm x',
      'ls | sh',
      'ls $(rm x)',
      'ls `rm x`',
      'ls\nrm x',
      'ls > out.txt',
      'bash -c "ls"',
      'env X=1 ls',
      'X=1 ls',
      'ls <<EOF',
      '$CMD',
      '(ls)',
      '{ ls; }',
      'ls # ; rm',
      '/bin/ls',
      'echo "$(rm x)"',
      'ls >> f',
      'ls 2> err.txt',
      'ls &> f',
      'ls /',
      'ls ~',
      'ls ../..',
      './ls',
    ])('%j is not covered', (line) => {
      expect(coveredByLs(line)).toBe(false);
    });

    it.each(["'l''s'", 'l\\s', 'ls 2>&1', 'ls > /dev/null'])('%j is covered', (line) => {
      expect(coveredByLs(line)).toBe(true);
    });
  });

  it('`git -c core.pager=sh status` is not covered by `git status`', () => {
    const entries = safeCommandsInEffect({ global: ['git status'] });
    expect(coveredBySafe(entries)('git status')).toBe(true);
    expect(coveredBySafe(entries)('git -c core.pager=sh status')).toBe(false);
  });
});
