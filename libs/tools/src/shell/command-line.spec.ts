import { analyseCommandLine, describeCommandKeys, type SimpleCommand } from './command-line';
import { lineIsCovered } from './safe-commands';

const keysOf = (line: string): (string | null)[] => {
  const analysis = analyseCommandLine(line);
  if (!analysis.reusable) {
    throw new Error(`expected ${JSON.stringify(line)} to be reusable, got: ${analysis.reason}`);
  }
  return analysis.commands.map((command) => command.key);
};

const reasonOf = (line: string): string => {
  const analysis = analyseCommandLine(line);
  if (analysis.reusable) {
    throw new Error(`expected ${JSON.stringify(line)} to be refused, got keys ${JSON.stringify(analysis.commands.map((c) => c.key))}`);
  }
  return analysis.reason;
};

const coveredByGrants =
  (...granted: string[]) =>
  (line: string): boolean =>
    lineIsCovered(analyseCommandLine(line), (command: SimpleCommand) => command.key !== null && granted.includes(command.key));

describe('analyseCommandLine', () => {
  describe('reusable lines and their grant keys', () => {
    it('`ls && git status` is reusable with keys ["ls", "git status"]', () => {
      expect(analyseCommandLine('ls && git status')).toEqual({
        reusable: true,
        commands: [
          { program: 'ls', args: [], key: 'ls' },
          { program: 'git', args: ['status'], key: 'git status' },
        ],
      });
    });

    it.each([
      ['ls', ['ls']],
      ['ls -la /tmp', ['ls']],
      ['git diff --stat HEAD~1', ['git diff']],
      ['npm test', ['npm test']],
      ['npm run build', ['npm run build']],
      ['npm run-script build', ['npm run-script build']],
      ['pnpm run test:unit', ['pnpm run test:unit']],
      ['yarn run lint --fix', ['yarn run lint']],
      ['yarn build', ['yarn build']],
      ['make build', ['make build']],
      ['docker ps -a', ['docker ps']],
      ['cargo test --release', ['cargo test']],
      ['/usr/bin/git status', ['/usr/bin/git status']],
      ['go1.22 build ./...', ['go1.22 build']],
      ['cat a.txt | grep x | wc -l', ['cat', 'grep', 'wc']],
      ['ls; pwd', ['ls', 'pwd']],
      ['ls || echo missing', ['ls', 'echo']],
      ['sleep 1 & ls', ['sleep', 'ls']],
      ['ls |& grep x', ['ls', 'grep']],
      ['ls;', ['ls']],
      ['ls &', ['ls']],
      ['ls\npwd', ['ls', 'pwd']],
      ['\nls\n\npwd\n', ['ls', 'pwd']],
      ['ls &&\n  pwd', ['ls', 'pwd']],
      ['ls |\ngrep x', ['ls', 'grep']],
      ['cd sub && \\\n  ls -la', ['cd', 'ls']],
      ['./build.sh --fast', ['./build.sh']],
      ['/usr/bin/ls', ['/usr/bin/ls']],
      ["'l''s'", ['ls']],
      ['l\\s', ['ls']],
      ['"ls" -la', ['ls']],
      ['ls 2>&1', ['ls']],
      ['ls > /dev/null', ['ls']],
      ['ls >/dev/null 2>&1', ['ls']],
      ['ls 2>/dev/null', ['ls']],
      ["ls > '/dev/null'", ['ls']],
      ['ls &>/dev/null', ['ls']],
      ['ls >&2', ['ls']],
      ['ls 1>&2', ['ls']],
      ['ls 2>&-', ['ls']],
      ['ls <&0', ['ls']],
      ['>/dev/null ls', ['ls']],
      ['grep x < input.txt', ['grep']],
      ['echo "$HOME" ${USER} $1 $? $@', ['echo']],
      ["echo 'a;b|c&&d $(x) `y`' \"e;f\"", ['echo']],
      ['echo a#b', ['echo']],
      ['echo $ cost', ['echo']],
      ['ls *.ts src/{a,b} ~/x', ['ls']],
      ['printf "%s\\n" x', ['printf']],
      ['test -f x', ['test']],
      ['find . -name x', ['find']],
    ])('%j → %j', (line, keys) => {
      expect(keysOf(line)).toEqual(keys);
    });

    it('removes quotes from the program and arguments, and keeps expansions as written', () => {
      const analysis = analyseCommandLine(`echo 'a b' "c\\"d" e\\ f "\\$x" "a\\\\b" "\\q" $HOME "it's" ''`);
      expect(analysis.commands).toEqual([{ program: 'echo', args: ['a b', 'c"d', 'e f', '$x', 'a\\b', '\\q', '$HOME', "it's", ''], key: 'echo' }]);
    });

    it('`git diff` does not have the key of `git push`', () => {
      expect(keysOf('git diff')).toEqual(['git diff']);
      expect(keysOf('git push')).toEqual(['git push']);
      expect(coveredByGrants('git diff')('git push origin main')).toBe(false);
    });

    it('`npm run build` and `npm run deploy` have different keys', () => {
      expect(keysOf('npm run build')).toEqual(['npm run build']);
      expect(keysOf('npm run deploy')).toEqual(['npm run deploy']);
      expect(coveredByGrants('npm run build')('npm run deploy')).toBe(false);
    });

    it('a path is not the same key as the bare program name', () => {
      expect(keysOf('/bin/ls')).toEqual(['/bin/ls']);
      expect(coveredByGrants('ls')('/bin/ls')).toBe(false);
    });
  });

  describe('lines that offer no reusable grant', () => {
    it.each([
      ['', 'the command line is empty'],
      ['   ', 'the command line is empty'],
      ['\n\n', 'the command line is empty'],
      ['ls $(rm x)', 'it uses command substitution ($(...))'],
      ['echo "$(rm x)"', 'it uses command substitution ($(...))'],
      ['echo $((1 + 2))', 'it uses arithmetic expansion ($((...)))'],
      ['echo $[1 + 2]', 'it uses arithmetic expansion ($((...)))'],
      ['ls `rm x`', 'it uses command substitution (backticks)'],
      ['echo "`rm x`"', 'it uses command substitution (backticks)'],
      ['diff <(ls a) <(ls b)', 'it uses process substitution (<(...) or >(...))'],
      ['ls >(cat)', 'it uses process substitution (<(...) or >(...))'],
      ['cat <<EOF\nx\nEOF', 'it uses a heredoc (<<)'],
      ['cat <<-EOF', 'it uses a heredoc (<<)'],
      ['ls <<EOF', 'it uses a heredoc (<<)'],
      ['cat <<< x', 'it uses a here-string (<<<)'],
      ['(ls)', 'it uses a subshell or grouping ((...))'],
      ['ls; (rm x)', 'it uses a subshell or grouping ((...))'],
      ['ls !(x)', 'it uses a subshell or grouping ((...))'],
      ['{ ls; }', 'it uses command grouping ({ ...; })'],
      ['ls # ; rm', 'it contains a comment (#), which hides what follows from a reader'],
      ['ls;#x', 'it contains a comment (#), which hides what follows from a reader'],
      ["echo 'x", 'it has an unterminated quote'],
      ['echo "x', 'it has an unterminated quote'],
      ['echo ${X', 'it has an unterminated ${...}'],
      ["echo $'\\x41'", 'it uses $\'...\' or $"..." quoting'],
      ['echo $"x"', 'it uses $\'...\' or $"..." quoting'],
      ['echo ${X:-y}', 'it uses a parameter expansion that cannot be checked (`${X:-y}`)'],
      ['echo ${X:=y}', 'it uses a parameter expansion that cannot be checked (`${X:=y}`)'],
      ['echo ${!x}', 'it uses a parameter expansion that cannot be checked (`${!x}`)'],
      ['echo "${a[PATH=1]}"', 'it uses a parameter expansion that cannot be checked (`${a[PATH=1]}`)'],
      ['ls \\', 'it ends with a backslash'],
      ['l\\\ns', 'it continues a line (backslash-newline) in the middle of a word'],
      ['echo $\\\n(rm x)', 'it continues a line (backslash-newline) in the middle of a word'],
      ['echo "$\\\n(rm x)"', 'it continues a line (backslash-newline) inside double quotes'],
      ['ls {fd}>/dev/null', 'it stores a file descriptor in a variable ({name}>...)'],
      ['> /dev/null', 'it has a command made only of redirections'],
      ['ls && < x', 'it has a command made only of redirections'],
      ['X=1 ls', 'it sets variables for the command (X=1 ...)'],
      ['X=1', 'it sets variables for the command (X=1 ...)'],
      ['LD_PRELOAD=x ls', 'it sets variables for the command (X=1 ...)'],
      ['a[0]=1 ls', 'it sets variables for the command (X=1 ...)'],
      ['PATH+=:. ls', 'it sets variables for the command (X=1 ...)'],
      ["'X=1' ls", 'the program name "X=1" has characters that cannot be granted'],
      ['! ls', 'it negates a command (!)'],
      ['ls | ! grep x', 'it negates a command (!)'],
      ['if true; then ls; fi', 'it uses shell control syntax (`if`)'],
      ['for f in a; do ls; done', 'it uses shell control syntax (`for`)'],
      ['while true; do ls; done', 'it uses shell control syntax (`while`)'],
      ['[[ -f x ]]', 'it uses shell control syntax (`[[`)'],
      ['function f { ls; }', 'it uses command grouping ({ ...; })'],
      ['coproc ls', 'it uses shell control syntax (`coproc`)'],
      ['[ -f x ]', 'it uses a test expression ([ ... ]), which cannot be granted'],
      ['$CMD', 'the program is named by a variable (`$CMD`)'],
      ['"$CMD" x', 'the program is named by a variable (`$CMD`)'],
      ['${CMD} x', 'the program is named by a variable (`${CMD}`)'],
      ['l* x', 'the program name `l*` uses a wildcard'],
      ['l? x', 'the program name `l?` uses a wildcard'],
      ['{ls,-la}', 'the program name `{ls,-la}` uses brace expansion'],
      ["'l s'", 'the program name "l s" has characters that cannot be granted'],
      ["ls';'rm", 'the program name "ls;rm" has characters that cannot be granted'],
      ["''", 'the program name is empty'],
      ['; ls', 'it has an empty command before `;`'],
      ['ls ;; ls', 'it has an empty command before `;`'],
      ['| ls', 'it has an empty command before `|`'],
      ['ls && && pwd', 'it has an empty command before `&&`'],
      ['ls & ;', 'it has an empty command before `;`'],
      ['ls\n;', 'it has an empty command before `;`'],
      ['ls &&', 'it ends with `&&`'],
      ['ls ||\n', 'it ends with `||`'],
      ['ls |', 'it ends with `|`'],
      ['ls > out.txt', 'it writes to a file (`> out.txt`)'],
      ['ls >> f', 'it writes to a file (`>> f`)'],
      ['ls 2> err.txt', 'it writes to a file (`2> err.txt`)'],
      ['ls 1>f', 'it writes to a file (`1> f`)'],
      ['ls &> f', 'it writes to a file (`&> f`)'],
      ['ls &>> f', 'it writes to a file (`&>> f`)'],
      ['ls >| f', 'it writes to a file (`>| f`)'],
      ['ls >& f', 'it writes to a file (`>& f`)'],
      ['ls <> f', 'it writes to a file (`<> f`)'],
      ['ls > /dev/null2', 'it writes to a file (`> /dev/null2`)'],
      ['ls > $OUT', 'it writes to a file (`> $OUT`)'],
      ['ls 2>&1 > f', 'it writes to a file (`> f`)'],
      ['ls >', 'it has a redirection (`>`) without a target'],
      ['ls > ; rm x', 'it has a redirection (`>`) without a target'],
      ['cat < /dev/tcp/example.com/80', 'it opens a network connection (`< /dev/tcp/example.com/80`)'],
      ['cat < $F', 'it reads from a file named by an expansion or wildcard (`< $F`)'],
      ['cat <&file', 'it redirects input from something other than a file descriptor (`<& file`)'],
      ['ls\r', 'it contains control characters'],
      ['ls \u001b[2K', 'it contains control characters'],
      ['echo \u202e', 'it contains bidirectional text controls, which can disguise what it runs'],
    ])('%j: %s', (line, reason) => {
      expect(reasonOf(line)).toBe(reason);
    });

    it.each([
      'eval', 'exec', 'source', '.', 'env', 'sudo', 'su', 'doas', 'sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'csh', 'tcsh',
      'xargs', 'nohup', 'nice', 'ionice', 'timeout', 'time', 'command', 'builtin', 'watch', 'strace', 'ltrace', 'chroot',
      'setsid', 'stdbuf', 'flock', 'parallel', 'script', 'unbuffer', 'busybox', 'npx', 'trap',
    ])('`%s` runs other commands, so it has no key', (program) => {
      const analysis = analyseCommandLine(`ls && ${program} x`);
      expect(analysis).toEqual({
        reusable: false,
        reason: `\`${program}\` runs other commands`,
        commands: [
          { program: 'ls', args: [], key: 'ls' },
          { program, args: ['x'], key: null },
        ],
      });
    });

    it.each([
      ['/bin/bash -c ls', '`/bin/bash` runs other commands'],
      ['BASH -c ls', '`BASH` runs other commands'],
      ['\\bash -c ls', '`bash` runs other commands'],
      ["'sudo' ls", '`sudo` runs other commands'],
      ['bash5.2 -c ls', '`bash5.2` runs other commands'],
      ['python3 -c "print(1)"', '`python3` runs code given to it'],
      ['python3.12 script.py', '`python3.12` runs code given to it'],
      ['node x.js', '`node` runs code given to it'],
      ['awk 1 f', '`awk` runs code given to it'],
      ['export PATH=/tmp; ls', '`export` changes how later commands run'],
      ['read PATH < f', '`read` changes how later commands run'],
      ['set -k', '`set` changes how later commands run'],
      ['alias ls=rm', '`alias` changes how later commands run'],
      ['hash -p /tmp/x ls', '`hash` changes how later commands run'],
    ])('%j: %s', (line, reason) => {
      expect(reasonOf(line)).toBe(reason);
    });

    it.each([
      ['printf -v PATH /tmp; ls', '`printf -v` sets a shell variable'],
      ['printf -vPATH /tmp', '`printf -vPATH` sets a shell variable'],
      ['test -v x', '`test -v` evaluates a variable name, which can run code'],
      ['wait -np pid', '`wait -np` sets a shell variable'],
      ['printf "$FORMAT"', '`printf` with arguments that expand could set shell variables'],
      ['printf * x', '`printf` with arguments that expand could set shell variables'],
      ['test -f "$x"', '`test` with arguments that expand could set shell variables'],
    ])('builtins that can set variables: %j', (line, reason) => {
      expect(reasonOf(line)).toBe(reason);
    });

    it.each([
      ['git', '`git` without a subcommand cannot be granted'],
      ['make', '`make` without a subcommand cannot be granted'],
      ['git -C x status', '`git -C x status`: options before the subcommand cannot be granted'],
      ['git -c core.pager=sh status', '`git -c core.pager=sh status`: options before the subcommand cannot be granted'],
      ['git --no-pager log', '`git --no-pager log`: options before the subcommand cannot be granted'],
      ['git $SUB', '`git $SUB`: the subcommand `$SUB` is not a plain word'],
      ['git "st*"', '`git st*`: the subcommand `st*` is not a plain word'],
      ['make CC=sh', '`make CC=sh`: the subcommand `CC=sh` is not a plain word'],
      ['npm run', '`npm run` without a script name cannot be granted'],
      ['npm run -s build', '`npm run -s build`: options before the script name cannot be granted'],
      ['npm run $S', '`npm run $S`: the script name `$S` is not a plain word'],
      ['npm exec foo', '`npm exec` runs other programs'],
      ['npm x foo', '`npm x` runs other programs'],
      ['npm init foo', '`npm init` runs other programs'],
      ['pnpm dlx foo', '`pnpm dlx` runs other programs'],
      ['pnpm exec foo', '`pnpm exec` runs other programs'],
      ['yarn dlx foo', '`yarn dlx` runs other programs'],
      ['yarn exec foo', '`yarn exec` runs other programs'],
      ['docker exec c rm -rf /', '`docker exec` runs other programs'],
      ['bundle exec rake', '`bundle exec` runs other programs'],
    ])('programs with subcommands: %j', (line, reason) => {
      expect(reasonOf(line)).toBe(reason);
    });
  });

  describe('best-effort commands on refused lines', () => {
    it('lists every command, with null keys where a command can never be granted', () => {
      const analysis = analyseCommandLine('ls && git -C x status | sh');
      expect(analysis.commands.map((command) => [command.program, command.key])).toEqual([
        ['ls', 'ls'],
        ['git', null],
        ['sh', null],
      ]);
    });

    it('keeps the key of a command refused only for its redirection', () => {
      expect(analyseCommandLine('ls > out.txt')).toEqual({
        reusable: false,
        reason: 'it writes to a file (`> out.txt`)',
        commands: [{ program: 'ls', args: [], key: 'ls' }],
      });
    });

    it('gives no commands when the line cannot be split into commands', () => {
      expect(analyseCommandLine('ls && echo $(rm x)').commands).toEqual([]);
    });
  });

  describe('bypass attempts when `ls` is granted', () => {
    const coveredByLs = coveredByGrants('ls');

    it.each([
      'ls; rm -rf /',
      'ls && rm x',
      'ls || rm x',
      'ls | sh',
      'ls & rm x',
      'ls $(rm x)',
      'ls `rm x`',
      'ls\nrm x',
      'ls > out.txt',
      'ls >> f',
      'ls 2> err.txt',
      'ls &> f',
      'bash -c "ls"',
      'env X=1 ls',
      'X=1 ls',
      'ls <<EOF',
      '$CMD',
      '(ls)',
      '{ ls; }',
      'ls # ; rm',
      '/bin/ls',
      './ls',
      'echo "$(rm x)"',
      'ls "$(rm x)"',
      "ls $'\\'' ; rm -rf / #'",
      'ls $\\\n(rm x)',
      'ls "$\\\n(rm x)"',
      'l\\\ns; rm x',
      'printf -v PATH /tmp/evil; ls',
      'export PATH=/tmp/evil; ls',
      'ls {PATH}>/dev/null; ls',
      'ls; LS',
    ])('%j is not covered', (line) => {
      expect(coveredByLs(line)).toBe(false);
    });

    it.each(["'l''s'", 'l\\s', '"ls"', 'ls 2>&1', 'ls > /dev/null', 'ls -la /tmp', 'ls;', 'ls\n'])('%j means `ls` and is covered', (line) => {
      expect(coveredByLs(line)).toBe(true);
    });

    it('`ls && ls` is covered: every command on it is granted', () => {
      expect(coveredByLs('ls && ls -a')).toBe(true);
    });
  });

  it('`ls && curl x | sh` is refused because of `sh`, and grants {ls, git status} do not cover it', () => {
    expect(reasonOf('ls && curl x | sh')).toBe('`sh` runs other commands');
    const covered = coveredByGrants('ls', 'git status');
    expect(covered('ls && git status')).toBe(true);
    expect(covered('ls && curl x | sh')).toBe(false);
    expect(covered('ls && curl x')).toBe(false);
  });

  it('gives every command a key whenever the line is reusable', () => {
    const lines = ['ls', 'ls && git status', 'a | b | c', 'npm run x; make y & z', './x; /y/z'];
    for (const line of lines) {
      const analysis = analyseCommandLine(line);
      expect(analysis.reusable).toBe(true);
      expect(analysis.commands.length).toBeGreaterThan(0);
      expect(analysis.commands.every((command) => command.key !== null)).toBe(true);
    }
  });
});

describe('describeCommandKeys', () => {
  it.each([
    [['ls'], '`ls` (any arguments)'],
    [['ls', 'git status'], '`ls` and `git status` (any arguments)'],
    [['ls', 'git status', 'npm run build'], '`ls`, `git status` and `npm run build` (any arguments)'],
    [['ls', 'ls', 'pwd'], '`ls` and `pwd` (any arguments)'],
    [[], 'no commands'],
  ])('%j → %j', (keys, description) => {
    expect(describeCommandKeys(keys)).toBe(description);
  });
});
