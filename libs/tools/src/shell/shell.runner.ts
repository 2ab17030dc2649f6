import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { toolsInFlight } from '../tools-in-flight';
import { truncateUtf8 } from '../utf8';
import { normaliseWorkspacePath } from '../workspace.path';
import { collectChanges, compare, errorCode, type ChangesRefused, type Placed, type WorkspaceChanges } from './shell.changes';

export { SHELL_MAX_SCANNED_ENTRIES, type ChangesRefused, type WorkspaceChanges } from './shell.changes';

export interface ShellLimits {
  /** Wall-clock limit for the command; on expiry its whole process group is killed. */
  timeoutMs: number;
  /** Kept of stdout, and separately of stderr; the rest is read and dropped. */
  maxOutputBytes: number;
  /** Larger files are not written back to the workspace. */
  maxFileBytes: number;
  /**
   * The workspace's total size limit: once the files that would be in the workspace after the
   * command add up to more, the scan stops reading and none of the changes are kept.
   */
  maxWorkspaceBytes: number;
}

export interface ShellRun {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  changes: WorkspaceChanges | ChangesRefused;
}

/** The whole environment a command sees; nothing of the worker's own environment is passed on. */
const SHELL_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * How long output may still arrive once the shell has exited and its process group is killed. Only a
 * process that left the group (setsid) can hold a pipe open past that; its output is then dropped.
 */
const DRAIN_MS = 500;

/**
 * Runs `command` with `/bin/sh -c` in a fresh scratch folder holding `files`, and reports which
 * workspace files it created, changed or deleted, or why none of that is kept: the files would take
 * the workspace past `maxWorkspaceBytes`, or there are more than SHELL_MAX_SCANNED_ENTRIES to look at
 * (the scan stops there, so a command cannot make the worker read and hold an unbounded amount).
 * Layout of the scratch folder (removed afterwards): `work/` is the command's cwd and holds the
 * files; `tmp/` is its HOME and TMPDIR, beside `work/` so that caches and dotfiles a program drops
 * there are never mistaken for workspace files.
 *
 * The command runs in its own process group, which is killed when the time limit expires and also as
 * soon as the shell exits, so a background child (`server &`) never outlives the call.
 * Throws only when the process cannot be started at all.
 */
export async function runShellCommand(command: string, files: ReadonlyMap<string, string>, limits: ShellLimits): Promise<ShellRun> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'parley-sh-'));
  try {
    const work = path.join(root, 'work');
    const tmp = path.join(root, 'tmp');
    await fs.mkdir(work);
    await fs.mkdir(tmp);
    const placed = await placeFiles(work, files);
    const env = { PATH: SHELL_PATH, HOME: tmp, TMPDIR: tmp, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
    const outcome = await runProcess(command, work, env, limits);
    const changes = await collectChanges(work, placed, limits);
    return { ...outcome, changes };
  } finally {
    await removeScratch(root);
  }
}

async function placeFiles(work: string, files: ReadonlyMap<string, string>): Promise<Placed> {
  const placed: Placed = { files: new Map(), skipped: [] };
  for (const [raw, content] of [...files].sort(([a], [b]) => compare(a, b))) {
    const normalised = normaliseWorkspacePath(raw);
    if (!normalised.ok) {
      placed.skipped.push({ path: raw, reason: normalised.error });
      continue;
    }
    const file = normalised.value;
    if (placed.files.has(file)) {
      placed.skipped.push({ path: raw, reason: `same file as ${file}; not copied to the scratch folder` });
      continue;
    }
    const target = path.join(work, ...file.split('/'));
    try {
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.writeFile(target, content, { flag: 'wx' });
      placed.files.set(file, content);
    } catch (error) {
      // Both "a" and "a/b" in the workspace: on disk, a file and a folder cannot share a name.
      const code = errorCode(error);
      const why = code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR' ? 'a file and a folder cannot share a name' : code;
      placed.skipped.push({ path: file, reason: `not copied to the scratch folder (${why}); left unchanged` });
    }
  }
  return placed;
}

type ProcessOutcome = Omit<ShellRun, 'changes'>;

function runProcess(command: string, cwd: string, env: NodeJS.ProcessEnv, limits: ShellLimits): Promise<ProcessOutcome> {
  return new Promise<ProcessOutcome>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const running = toolsInFlight.begin(limits.timeoutMs + DRAIN_MS, child.pid);
    const stdout = new OutputCollector(limits.maxOutputBytes);
    const stderr = new OutputCollector(limits.maxOutputBytes);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));

    let timedOut = false;
    let settled = false;
    const killGroup = (): void => {
      if (child.pid === undefined) {
        return;
      }
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, limits.timeoutMs);

    child.once('error', (error) => {
      clearTimeout(timer);
      killGroup();
      running();
      if (!settled) {
        settled = true;
        reject(error);
      }
    });
    child.once('exit', (exitCode, signal) => {
      clearTimeout(timer);
      // Whatever the shell left running in its group (`sleep 60 &`) would keep the pipes open.
      killGroup();
      void drained([child.stdout, child.stderr], DRAIN_MS).then(() => {
        running();
        if (settled) {
          return;
        }
        settled = true;
        const out = stdout.text();
        const err = stderr.text();
        resolve({
          exitCode,
          signal,
          timedOut,
          stdout: out.text,
          stderr: err.text,
          stdoutTruncated: out.truncated,
          stderrTruncated: err.truncated,
        });
      });
    });
  });
}

/** Resolves when every stream has closed, or after `ms`, when the ones still open are destroyed. */
function drained(streams: Readable[], ms: number): Promise<void> {
  const closes = streams.map((stream) =>
    stream.closed || stream.destroyed ? Promise.resolve() : new Promise<void>((resolve) => stream.once('close', () => resolve())),
  );
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([Promise.all(closes).then(() => undefined), deadline]).then(() => {
    clearTimeout(timer);
    for (const stream of streams) {
      stream.destroy();
    }
  });
}

/**
 * Keeps the first `maxBytes` of a stream (plus the few bytes that may complete a character cut at
 * the limit) and counts, without keeping, the rest, so a chatty child never blocks on a full pipe.
 */
class OutputCollector {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private seen = 0;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    this.seen += chunk.length;
    const room = this.maxBytes + 3 - this.kept;
    if (room > 0) {
      const part = chunk.subarray(0, room);
      this.chunks.push(part);
      this.kept += part.length;
    }
  }

  /** Decoded lossily (invalid bytes become U+FFFD), then cut to maxBytes between characters. */
  text(): { text: string; truncated: boolean } {
    const decoded = Buffer.concat(this.chunks).toString('utf8');
    const text = truncateUtf8(decoded, this.maxBytes);
    return { text, truncated: this.seen > this.kept || text.length < decoded.length };
  }
}

/** Best effort: a folder the command made unreadable is opened up and the removal tried again. */
async function removeScratch(root: string): Promise<void> {
  try {
    await fs.rm(root, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    await openUp(root);
    await fs.rm(root, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }
}

async function openUp(dir: string): Promise<void> {
  await fs.chmod(dir, 0o700).catch(() => undefined);
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.isDirectory()) {
      await openUp(path.join(dir, entry.name));
    }
  }
}
