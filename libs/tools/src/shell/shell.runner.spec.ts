import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runShellCommand, SHELL_MAX_SCANNED_ENTRIES, type ShellLimits, type ShellRun, type WorkspaceChanges } from './shell.runner';

const limits: ShellLimits = { timeoutMs: 30_000, maxOutputBytes: 64 * 1024, maxFileBytes: 1024, maxWorkspaceBytes: 1024 * 1024 };

const run = (command: string, files: Record<string, string> = {}, overrides: Partial<ShellLimits> = {}): Promise<ShellRun> =>
  runShellCommand(command, new Map(Object.entries(files)), { ...limits, ...overrides });

/** The changes of a run that was not refused. */
function collected(result: ShellRun): WorkspaceChanges {
  if ('refused' in result.changes) {
    throw new Error(`changes refused: ${result.changes.refused}`);
  }
  return result.changes;
}

/**
 * Whether this process can list a folder it made unreadable (root, or CAP_DAC_OVERRIDE, can), in
 * which case `chmod 000` does not hide anything from the runner either.
 */
function canListUnreadableFolder(): boolean {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-runner-probe-'));
  const probe = path.join(dir, 'closed');
  mkdirSync(probe);
  chmodSync(probe, 0o000);
  try {
    readdirSync(probe);
    return true;
  } catch {
    return false;
  } finally {
    chmodSync(probe, 0o700);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Alive and not a zombie waiting for a parent to reap it. */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Polls a condition (a killed process is reaped asynchronously), failing after `ms`. */
async function waitFor(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error('condition not met in time');
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('runShellCommand', () => {
  it('reports the exit code, stdout and stderr', async () => {
    const result = await run('echo out; echo err >&2; exit 3');
    expect(result).toEqual({
      exitCode: 3,
      signal: null,
      timedOut: false,
      stdout: 'out\n',
      stderr: 'err\n',
      stdoutTruncated: false,
      stderrTruncated: false,
      changes: { writes: [], deletes: [], skipped: [] },
    });
  });

  it('kills the whole process group when the time limit expires', async () => {
    const started = Date.now();
    const result = await run('sleep 60 & echo $!; sleep 60', {}, { timeoutMs: 1500 });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
    const background = Number(result.stdout.trim());
    expect(background).toBeGreaterThan(0);
    await waitFor(() => !isRunning(background));
  });

  it('returns when the shell exits, killing a background child that holds stdout open', async () => {
    const started = Date.now();
    const result = await run('sleep 60 & echo $!');
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(result).toMatchObject({ timedOut: false, exitCode: 0, signal: null });
    const background = Number(result.stdout.trim());
    expect(background).toBeGreaterThan(0);
    await waitFor(() => !isRunning(background));
  });

  it('does not wait for a process that left the group and holds stdout open', async () => {
    const started = Date.now();
    // The shell waits until the child has its own session (field 6 of /proc/PID/stat), so that killing the group misses it.
    const result = await run('setsid sleep 60 & pid=$!; until [ "$(cut -d" " -f6 /proc/$pid/stat)" = "$pid" ]; do :; done; echo $pid');
    const escaped = Number(result.stdout.trim());
    try {
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(result).toMatchObject({ timedOut: false, exitCode: 0 });
      expect(escaped).toBeGreaterThan(0);
    } finally {
      if (escaped > 0) {
        process.kill(escaped, 'SIGKILL');
      }
    }
  });

  it('keeps at most maxOutputBytes of each stream and drains the rest', async () => {
    const result = await run("head -c 200000 /dev/zero | tr '\\0' a; head -c 300000 /dev/zero | tr '\\0' b >&2", {}, { maxOutputBytes: 1000 });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('a'.repeat(1000));
    expect(result.stderr).toBe('b'.repeat(1000));
    expect(result.stdoutTruncated).toBe(true);
    expect(result.stderrTruncated).toBe(true);
  });

  it('cuts output between characters and decodes invalid UTF-8 lossily', async () => {
    const cut = await run("for i in $(seq 1 600); do printf 'é'; done", {}, { maxOutputBytes: 1001 });
    expect(cut.stdout).toBe('é'.repeat(500));
    expect(cut.stdoutTruncated).toBe(true);
    const exact = await run("printf 'éé'", {}, { maxOutputBytes: 4 });
    expect(exact).toMatchObject({ stdout: 'éé', stdoutTruncated: false });
    const lossy = await run("printf '\\377ok'");
    expect(lossy).toMatchObject({ stdout: '\uFFFDok', stdoutTruncated: false });
  });

  it('gives the command only a minimal environment: no secrets, cwd the scratch folder, HOME and TMPDIR beside it', async () => {
    process.env.PARLEY_TEST_SECRET = 'hunter2-secret';
    try {
      const result = await run('printenv; echo "cwd=$(pwd)"');
      expect(result.stdout).not.toContain('hunter2-secret');
      const lines = result.stdout.trim().split('\n');
      const env = Object.fromEntries(lines.filter((line) => !line.startsWith('cwd=')).map((line) => line.split(/=(.*)/s).slice(0, 2)));
      const cwd = lines.find((line) => line.startsWith('cwd='))!.slice(4);
      // dash adds PWD itself; everything else is what the runner passed.
      expect(Object.keys(env).sort()).toEqual(['HOME', 'LANG', 'LC_ALL', 'PATH', 'PWD', 'TMPDIR']);
      expect(env).toMatchObject({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: env.TMPDIR, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' });
      expect(path.basename(path.dirname(cwd))).toMatch(/^parley-sh-/);
      expect(path.dirname(cwd)).toBe(path.join(os.tmpdir(), path.basename(path.dirname(cwd))));
      expect(env.TMPDIR.startsWith(`${cwd}/`)).toBe(false);
    } finally {
      delete process.env.PARLEY_TEST_SECRET;
    }
  });

  it('does not write back what the command puts in TMPDIR', async () => {
    const result = await run('echo scratch > "$TMPDIR/t.txt" && cat "$TMPDIR/t.txt" && echo kept > kept.txt');
    expect(result.stdout).toBe('scratch\n');
    expect(result.changes).toEqual({ writes: [{ path: 'kept.txt', content: 'kept\n' }], deletes: [], skipped: [] });
  });

  it('removes the scratch folder afterwards', async () => {
    const result = await run('pwd; echo x > file.txt; mkdir -p deep/er && echo y > deep/er/f.txt');
    const cwd = result.stdout.trim();
    expect(cwd).not.toBe('');
    expect(existsSync(cwd)).toBe(false);
    expect(existsSync(path.dirname(cwd))).toBe(false);
  });

  it('removes the scratch folder when the process cannot be started', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-runner-spec-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      // A NUL byte cannot be passed to exec: spawn throws after the scratch folder was made.
      await expect(run('echo \0 nope', { 'a.txt': 'a' })).rejects.toThrow();
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      if (saved === undefined) {
        delete process.env.TMPDIR;
      } else {
        process.env.TMPDIR = saved;
      }
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('lets the command see the workspace files', async () => {
    const result = await run('cat a.txt dir/sub/b.txt; ls -A', { 'a.txt': 'hello ', 'dir/sub/b.txt': 'world\n' });
    expect(result.stdout).toBe('hello world\na.txt\ndir\n');
    expect(result.changes).toEqual({ writes: [], deletes: [], skipped: [] });
  });

  it('reports changed, new and deleted files', async () => {
    const files = { 'a.txt': 'old', 'same.txt': 'same', 'dir/b.txt': 'b', 'gone/c.txt': 'c', 'f': 'now a folder' };
    const result = await run(
      "echo changed > a.txt; rm dir/b.txt; rm -r gone; mkdir -p n/m && printf 'né\\n' > n/m/c.txt; : > empty.txt; " +
        'rm f && mkdir f && echo inside > f/g.txt; touch same.txt',
      files,
    );
    expect(result.exitCode).toBe(0);
    expect(result.changes).toEqual({
      writes: [
        { path: 'a.txt', content: 'changed\n' },
        { path: 'empty.txt', content: '' },
        { path: 'f/g.txt', content: 'inside\n' },
        { path: 'n/m/c.txt', content: 'né\n' },
      ],
      deletes: ['dir/b.txt', 'f', 'gone/c.txt'],
      skipped: [],
    });
  });

  it('skips binary files and keeps a byte-order mark', async () => {
    const result = await run(
      "printf '\\377\\376' > bin.dat; head -c 10 /dev/zero > zeros.bin; printf 'x\\377' > was-text.txt; printf '\\357\\273\\277bom' > bom.txt",
      { 'was-text.txt': 'text' },
    );
    expect(result.changes).toEqual({
      writes: [{ path: 'bom.txt', content: '\uFEFFbom' }],
      deletes: [],
      skipped: [
        { path: 'bin.dat', reason: 'not UTF-8 text' },
        { path: 'was-text.txt', reason: 'not UTF-8 text' },
        { path: 'zeros.bin', reason: 'not text (contains NUL bytes)' },
      ],
    });
  });

  it('skips files over maxFileBytes, but not unchanged ones', async () => {
    const result = await run("printf '0123456789' > fits.txt; printf '01234567890' > big.txt", { 'old-big.txt': 'x'.repeat(20) }, { maxFileBytes: 10 });
    expect(result.changes).toEqual({
      writes: [{ path: 'fits.txt', content: '0123456789' }],
      deletes: [],
      skipped: [{ path: 'big.txt', reason: '11 bytes, over the 10-byte limit per file' }],
    });
  });

  it('skips a file over maxFileBytes that kept its old size but changed (the limit was lowered since)', async () => {
    const result = await run("printf 'y%.0s' $(seq 1 20) > old-big.txt", { 'old-big.txt': 'x'.repeat(20) }, { maxFileBytes: 10 });
    expect(result.changes).toEqual({
      writes: [],
      deletes: [],
      skipped: [{ path: 'old-big.txt', reason: '20 bytes or more, over the 10-byte limit per file' }],
    });
  });

  it('skips symbolic links and special files without following them', async () => {
    const result = await run('ln -s a.txt link.txt; ln -s /etc outside; rm b.txt && ln -s a.txt b.txt; mkfifo pipe', { 'a.txt': 'a', 'b.txt': 'b' });
    expect(result.changes).toEqual({
      writes: [],
      deletes: [],
      skipped: [
        { path: 'b.txt', reason: 'symbolic link' },
        { path: 'link.txt', reason: 'symbolic link' },
        { path: 'outside', reason: 'symbolic link' },
        { path: 'pipe', reason: 'special file (not a regular file)' },
      ],
    });
  });

  it('skips files whose names are no workspace path', async () => {
    const result = await run("touch \"$(printf 'bad\\001name')\" \"$(printf 'raw\\377')\" ' padded'; mkdir \"$(printf 'd\\377')\" && touch \"$(printf 'd\\377')/f\"");
    expect(collected(result).writes).toEqual([]);
    expect(collected(result).skipped).toEqual([
      { path: ' padded', reason: 'not a workspace path (its canonical spelling is "padded")' },
      { path: 'bad\u0001name', reason: 'invalid path "bad\\u0001name": control characters and invalid Unicode are not allowed' },
      { path: 'd\uFFFD', reason: 'folder name is not valid UTF-8' },
      { path: 'raw\uFFFD', reason: 'file name is not valid UTF-8' },
    ]);
  });

  describe('folders the command makes unreadable', () => {
    const files = { 'a.txt': 'a', 'notes/b.md': 'b', 'notes/deep/c.md': 'c', 'other/d.txt': 'd' };
    const readsAnyway = canListUnreadableFolder();

    it('never takes the files of an unreadable root folder as deleted', async () => {
      const result = await run('chmod 000 .', files);
      expect(result.exitCode).toBe(0);
      expect(collected(result).deletes).toEqual([]);
      expect(collected(result).writes).toEqual([]);
      if (readsAnyway) {
        // Running as root: the folder could still be listed, so every file was seen unchanged.
        expect(collected(result).skipped).toEqual([]);
      } else {
        expect(collected(result).skipped).toEqual([
          { path: '.', reason: 'folder could not be read (EACCES)' },
          { path: 'a.txt', reason: 'in a folder that could not be read; left unchanged' },
          { path: 'notes/b.md', reason: 'in a folder that could not be read; left unchanged' },
          { path: 'notes/deep/c.md', reason: 'in a folder that could not be read; left unchanged' },
          { path: 'other/d.txt', reason: 'in a folder that could not be read; left unchanged' },
        ]);
      }
    });

    it('never takes the files of an unreadable subfolder as deleted, and still sees the others', async () => {
      const result = await run('rm other/d.txt; echo changed > a.txt; chmod 000 notes', files);
      expect(result.exitCode).toBe(0);
      expect(collected(result).deletes).toEqual(['other/d.txt']);
      expect(collected(result).writes).toEqual([{ path: 'a.txt', content: 'changed\n' }]);
      if (readsAnyway) {
        expect(collected(result).skipped).toEqual([]);
      } else {
        expect(collected(result).skipped).toEqual([
          { path: 'notes/', reason: 'folder could not be read (EACCES)' },
          { path: 'notes/b.md', reason: 'in a folder that could not be read; left unchanged' },
          { path: 'notes/deep/c.md', reason: 'in a folder that could not be read; left unchanged' },
        ]);
      }
    });

    it('never takes files as deleted when the root folder cannot be listed at all, even as root', async () => {
      // Replaced by a file: listing it fails (ENOTDIR) whatever the user, which is the `chmod 000 .` case for root too.
      const result = await run('cd .. && rm -r work && echo not-a-folder > work', files);
      expect(result.exitCode).toBe(0);
      expect(result.changes).toEqual({
        writes: [],
        deletes: [],
        skipped: [
          { path: '.', reason: 'folder could not be read (ENOTDIR)' },
          { path: 'a.txt', reason: 'in a folder that could not be read; left unchanged' },
          { path: 'notes/b.md', reason: 'in a folder that could not be read; left unchanged' },
          { path: 'notes/deep/c.md', reason: 'in a folder that could not be read; left unchanged' },
          { path: 'other/d.txt', reason: 'in a folder that could not be read; left unchanged' },
        ],
      });
    });

    it('removes the scratch folder even when the command closed it', async () => {
      const result = await run('chmod 000 .; pwd', files);
      expect(existsSync(path.dirname(result.stdout.trim()))).toBe(false);
    });
  });

  describe('bounds on what is read back', () => {
    const bounded = { maxFileBytes: 1000, maxWorkspaceBytes: 5000 };
    /** Writes `count` new files of `bytes` bytes each. */
    const writeFiles = (count: number, bytes: number): string =>
      `line=$(head -c ${bytes} /dev/zero | tr '\\0' x); for i in $(seq 1 ${count}); do printf '%s' "$line" > f$i.txt; done`;

    it('stops reading as soon as the files to keep pass the workspace limit, and keeps none of them', async () => {
      const result = await run(`${writeFiles(600, 900)}; echo done`, {}, bounded);
      expect(result.stdout).toBe('done\n');
      // Read up to the first file past the limit, not the 540,000 bytes the command wrote.
      expect(result.changes).toEqual({ refused: 'workspace full: the changes would make at least 5400 bytes, over the limit of 5000' });
    });

    it('counts what the workspace would hold: files left as they are, not deleted files nor those not written back', async () => {
      const kept = await run(writeFiles(1, 900), { 'big.txt': 'b'.repeat(4500) }, bounded);
      expect(kept.changes).toEqual({ refused: 'workspace full: the changes would make at least 5400 bytes, over the limit of 5000' });

      const notKept = 'head -c 900 /dev/zero > zeros.bin; head -c 2000 /dev/zero | tr \'\\0\' y > large.txt';
      const replaced = await run(`rm big.txt; ${writeFiles(4, 900)}; ${notKept}`, { 'big.txt': 'b'.repeat(4500) }, bounded);
      const changes = collected(replaced);
      expect(changes.writes.map((write) => write.path)).toEqual(['f1.txt', 'f2.txt', 'f3.txt', 'f4.txt']);
      expect(changes.deletes).toEqual(['big.txt']);
      expect(changes.skipped).toEqual([
        { path: 'large.txt', reason: '2000 bytes, over the 1000-byte limit per file' },
        { path: 'zeros.bin', reason: 'not text (contains NUL bytes)' },
      ]);
    });

    it(`looks at no more than ${SHELL_MAX_SCANNED_ENTRIES} files and folders`, async () => {
      const result = await run(`mkdir d && cd d && seq 1 ${SHELL_MAX_SCANNED_ENTRIES} | xargs touch`);
      expect(result.exitCode).toBe(0);
      expect(result.changes).toEqual({
        refused: `more than ${SHELL_MAX_SCANNED_ENTRIES} files and folders after the command; at most ${SHELL_MAX_SCANNED_ENTRIES} are looked at`,
      });
      // The folder d and its files: exactly as many entries as are looked at.
      const fits = await run(`mkdir d && cd d && seq 2 ${SHELL_MAX_SCANNED_ENTRIES} | xargs touch`);
      expect(collected(fits).writes).toHaveLength(SHELL_MAX_SCANNED_ENTRIES - 1);
    });
  });

  it('leaves alone workspace files that cannot be put on disk', async () => {
    const result = await run('ls -A', { a: 'file', 'a/b': 'under a file' });
    expect(result.stdout).toBe('a\n');
    expect(result.changes).toEqual({
      writes: [],
      deletes: [],
      skipped: [{ path: 'a/b', reason: 'not copied to the scratch folder (a file and a folder cannot share a name); left unchanged' }],
    });
  });
});
