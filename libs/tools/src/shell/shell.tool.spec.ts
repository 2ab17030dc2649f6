import { z } from 'zod';
import type { ToolResult } from '../tool-result';
import { executeShellTool, SHELL_COMMAND_MAX_BYTES, ShellInputSchema, type ShellWorkspace } from './shell.tool';
import type { ShellLimits } from './shell.runner';

type CommitOutcome = Awaited<ReturnType<ShellWorkspace['commit']>>;

/** Enough of the store's contract: changes applied together once per effect id, a total size limit, the first result replayed. */
class MemoryShellWorkspace implements ShellWorkspace {
  readonly files = new Map<string, string>();
  readonly results = new Map<string, string>();
  readonly calls: string[] = [];

  constructor(private readonly maxTotalBytes = 10_000) {}

  snapshot(): Promise<Map<string, string>> {
    this.calls.push('snapshot');
    return Promise.resolve(new Map(this.files));
  }

  recorded(effectId: string): Promise<string | null> {
    this.calls.push(`recorded ${effectId}`);
    return Promise.resolve(this.results.get(effectId) ?? null);
  }

  commit(effectId: string, changes: { writes: Array<{ path: string; content: string }>; deletes: string[] }, result: string): Promise<CommitOutcome> {
    this.calls.push(`commit ${effectId}`);
    const first = this.results.get(effectId);
    if (first !== undefined) {
      return Promise.resolve({ status: 'replayed', result: first });
    }
    const next = new Map(this.files);
    changes.deletes.forEach((path) => next.delete(path));
    changes.writes.forEach(({ path, content }) => next.set(path, content));
    const total = [...next.values()].reduce((sum, content) => sum + Buffer.byteLength(content), 0);
    if (total > this.maxTotalBytes) {
      return Promise.resolve({ status: 'rejected', error: `workspace full: ${total} bytes, over the ${this.maxTotalBytes}-byte limit` });
    }
    this.files.clear();
    next.forEach((content, path) => this.files.set(path, content));
    this.results.set(effectId, result);
    return Promise.resolve({ status: 'applied', result });
  }
}

const limits: ShellLimits = { timeoutMs: 30_000, maxOutputBytes: 1000, maxFileBytes: 1000, maxWorkspaceBytes: 10_000 };
const body = (result: ToolResult): any => JSON.parse(result.content);

describe('executeShellTool', () => {
  let workspace: MemoryShellWorkspace;
  let effect = 0;
  const run = (input: unknown, effectId = `e${(effect += 1)}`, overrides: Partial<ShellLimits> = {}): Promise<ToolResult> =>
    executeShellTool({ input, effectId, workspace, limits: { ...limits, ...overrides } });

  beforeEach(() => {
    workspace = new MemoryShellWorkspace();
  });

  it('runs the command on the workspace files and commits its changes with the result', async () => {
    workspace.files.set('notes/a.md', 'alpha\n');
    workspace.files.set('old.txt', 'old');
    const result = await run({ command: 'cat notes/a.md; echo beta >> notes/a.md; rm old.txt; echo new > new.txt; echo warn >&2' }, 'e-main');
    expect(result.isError).toBe(false);
    expect(body(result)).toEqual({
      ok: true,
      exitCode: 0,
      stdout: 'alpha\n',
      stderr: 'warn\n',
      files: { written: ['new.txt', 'notes/a.md'], deleted: ['old.txt'], skipped: [] },
    });
    expect(Object.fromEntries(workspace.files)).toEqual({ 'notes/a.md': 'alpha\nbeta\n', 'new.txt': 'new\n' });
    expect(workspace.results.get('e-main')).toBe(result.content);
    expect(workspace.calls).toEqual(['recorded e-main', 'snapshot', 'commit e-main']);
  });

  it('reports a failing command as an error result, still keeping its file changes', async () => {
    const result = await run({ command: 'echo partial > out.txt; printf "\\377" > blob.bin; echo boom >&2; exit 2' });
    expect(result.isError).toBe(true);
    expect(body(result)).toEqual({
      ok: false,
      exitCode: 2,
      stdout: '',
      stderr: 'boom\n',
      files: { written: ['out.txt'], deleted: [], skipped: [{ path: 'blob.bin', reason: 'not UTF-8 text' }] },
    });
    expect(workspace.files.get('out.txt')).toBe('partial\n');
  });

  it('reports a timeout and cut output', async () => {
    const result = await run({ command: "head -c 5000 /dev/zero | tr '\\0' x; sleep 60" }, undefined, { timeoutMs: 1500 });
    expect(result.isError).toBe(true);
    expect(body(result)).toEqual({
      ok: false,
      exitCode: null,
      signal: 'SIGKILL',
      timedOut: true,
      stdout: 'x'.repeat(1000),
      stderr: '',
      stdoutTruncated: true,
      files: { written: [], deleted: [], skipped: [] },
    });
  });

  it('does not run the command again for an effect id already committed', async () => {
    const first = await run({ command: 'echo once >> log.txt; echo ran' }, 'e-retry');
    expect(workspace.files.get('log.txt')).toBe('once\n');
    workspace.calls.length = 0;
    const retried = await run({ command: 'echo once >> log.txt; echo ran' }, 'e-retry');
    expect(retried).toEqual(first);
    expect(workspace.calls).toEqual(['recorded e-retry']);
    expect(workspace.files.get('log.txt')).toBe('once\n');
  });

  it('returns the first result when the commit finds the effect id already applied', async () => {
    const first = await run({ command: 'exit 1' }, 'e-race');
    // Another worker committed between our `recorded` check and our commit.
    jest.spyOn(workspace, 'recorded').mockResolvedValueOnce(null);
    const second = await run({ command: 'echo other > other.txt' }, 'e-race');
    expect(second).toEqual(first);
    expect(second.isError).toBe(true);
    expect(workspace.files.has('other.txt')).toBe(false);
  });

  it('says so when the file changes are rejected, changes nothing, and replays that to a retried step', async () => {
    workspace = new MemoryShellWorkspace(100);
    workspace.files.set('keep.txt', 'keep');
    const result = await run({ command: "rm keep.txt; head -c 200 /dev/zero | tr '\\0' y > big.txt; echo done" }, 'e-full');
    expect(result.isError).toBe(true);
    expect(body(result)).toEqual({
      ok: false,
      error: 'the command ran (exit code 0) but its file changes were not kept: workspace full: 200 bytes, over the 100-byte limit',
      exitCode: 0,
      stdout: 'done\n',
      stderr: '',
    });
    expect(Object.fromEntries(workspace.files)).toEqual({ 'keep.txt': 'keep' });
    // Recorded with no change: a step retried after it gets the same result, the command not run again.
    expect(workspace.results.get('e-full')).toBe(result.content);
    workspace.calls.length = 0;
    expect(await run({ command: 'echo again > again.txt' }, 'e-full')).toEqual(result);
    expect(workspace.calls).toEqual(['recorded e-full']);
  });

  it('refuses file changes past the workspace limit before reading them all, and commits nothing', async () => {
    workspace = new MemoryShellWorkspace(5000);
    workspace.files.set('keep.txt', 'keep');
    // 600 files of 900 bytes, far more than the 5000 bytes the workspace holds.
    const command = "line=$(head -c 900 /dev/zero | tr '\\0' z); for i in $(seq 1 600); do printf '%s' \"$line\" > f$i.txt; done; echo done";
    const result = await run({ command }, 'e-over', { maxWorkspaceBytes: 5000 });
    expect(result.isError).toBe(true);
    expect(body(result)).toEqual({
      ok: false,
      // Folders list in no set order: keep.txt is counted or not before the limit is passed.
      error: expect.stringMatching(/^the command ran \(exit code 0\) but its file changes were not kept: workspace full: the changes would make at least (5400|5404) bytes, over the limit of 5000$/),
      exitCode: 0,
      stdout: 'done\n',
      stderr: '',
    });
    expect(workspace.calls).toEqual(['recorded e-over', 'snapshot', 'commit e-over']);
    expect(workspace.results.get('e-over')).toBe(result.content);
    expect(Object.fromEntries(workspace.files)).toEqual({ 'keep.txt': 'keep' });
  });

  it('lists at most 100 files of each kind', async () => {
    const result = await run({ command: 'for i in $(seq 1 130); do echo $i > f$i.txt; done' }, undefined, { maxFileBytes: 100 });
    const parsed = body(result);
    expect(parsed.files.written).toHaveLength(100);
    expect(parsed.filesNotListed).toBe(30);
    expect(workspace.files.size).toBe(130);
  });

  it('refuses bad input without running anything', async () => {
    expect(await run({})).toEqual({ content: '{"ok":false,"error":"invalid shell input: command: is required"}', isError: true });
    expect(body(await run({ command: '  ' })).error).toBe('invalid shell input: command: must not be empty');
    expect(body(await run({ command: 'echo \0' })).error).toBe('invalid shell input: command: must not contain NUL characters');
    expect(body(await run({ command: 'x'.repeat(SHELL_COMMAND_MAX_BYTES + 1) })).error).toBe(
      `invalid shell input: command: must be at most ${SHELL_COMMAND_MAX_BYTES} bytes`,
    );
    expect(body(await run('ls')).error).toBe('invalid shell input: expected a JSON object');
    expect(workspace.calls).toEqual([]);
  });

  it('refuses an unknown field, naming it, without running anything: `make` with a `cwd` must not run at the root', async () => {
    workspace.files.set('sub/Makefile', 'all:\n\ttouch made\n');
    expect(await run({ command: 'make', cwd: 'sub' })).toEqual({ content: '{"ok":false,"error":"invalid shell input: cwd: unknown field"}', isError: true });
    expect(workspace.calls).toEqual([]);
  });

  it.each([
    ['a carriage return', 'ls\rcat secret'],
    ['an escape sequence', 'cat notes/a.md\r\u001b[2Kls'],
    ['a bell', 'ls \u0007'],
    ['a vertical tab', 'ls\u000bx'],
    ['DEL', 'ls\u007f'],
    ['a C1 control (CSI)', 'ls \u009b2K'],
    ['a right-to-left override', 'ls \u202e txt.hs'],
    ['a left-to-right mark', 'ls\u200e'],
    ['a right-to-left mark', 'ls\u200f'],
    ['an Arabic letter mark', 'ls\u061c'],
    ['a directional isolate', 'ls \u2066x\u2069'],
  ])('refuses a command with %s, so an approver never sees a disguised one', async (_, command) => {
    expect(body(await run({ command }))).toEqual({
      ok: false,
      error: 'invalid shell input: command: control characters are not allowed (except newline and tab)',
    });
    expect(ShellInputSchema.safeParse({ command }).success).toBe(false);
    expect(workspace.calls).toEqual([]);
  });

  it('accepts newlines, tabs and ordinary Unicode', () => {
    expect(ShellInputSchema.safeParse({ command: 'ls\n\tpwd; echo héllo → ✓ שלום' }).success).toBe(true);
  });

  it('gives the model a JSON schema describing the command', () => {
    const schema = z.toJSONSchema(ShellInputSchema, { io: 'input' }) as unknown as { required: string[]; properties: { command: { type: string; description: string } } };
    expect(schema.required).toEqual(['command']);
    expect(schema.properties.command).toMatchObject({ type: 'string', description: expect.stringMatching(/\/bin\/sh -c/) });
    expect(schema).toMatchObject({ additionalProperties: false });
  });
});
