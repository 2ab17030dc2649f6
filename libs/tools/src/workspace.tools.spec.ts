import type { ToolResult } from './tool-result';
import type { WorkspaceToolName } from './tool.names';
import type { EffectOutcome, WorkspaceFile, WorkspacePort } from './workspace.port';
import { executeWorkspaceTool } from './workspace.tools';

/** Enough of the Redis store's contract: one application per effect id, a total size limit, replay of the first result. */
class MemoryWorkspace implements WorkspacePort {
  readonly files = new Map<string, string>();
  readonly effects = new Map<string, EffectOutcome>();
  readonly calls: string[] = [];

  constructor(private readonly maxTotalBytes: number) {}

  list(): Promise<WorkspaceFile[]> {
    this.calls.push('list');
    return Promise.resolve([...this.files].reverse().map(([path, content]) => ({ path, bytes: Buffer.byteLength(content) })));
  }

  read(path: string): Promise<string | null> {
    this.calls.push(`read ${path}`);
    return Promise.resolve(this.files.get(path) ?? null);
  }

  write(effectId: string, path: string, content: string): Promise<EffectOutcome> {
    this.calls.push(`write ${effectId} ${path}`);
    return Promise.resolve(
      this.once(effectId, () => {
        const total = [...this.files].reduce((sum, [other, text]) => sum + (other === path ? 0 : Buffer.byteLength(text)), 0);
        if (total + Buffer.byteLength(content) > this.maxTotalBytes) {
          return { status: 'rejected', error: `workspace full: ${this.maxTotalBytes}-byte limit` };
        }
        this.files.set(path, content);
        return { status: 'applied', result: JSON.stringify({ ok: true, path, bytes: Buffer.byteLength(content) }) };
      }),
    );
  }

  delete(effectId: string, path: string): Promise<EffectOutcome> {
    this.calls.push(`delete ${effectId} ${path}`);
    return Promise.resolve(
      this.once(effectId, () =>
        this.files.delete(path) ? { status: 'applied', result: JSON.stringify({ ok: true, path, deleted: true }) } : { status: 'rejected', error: `no such file: ${path}` },
      ),
    );
  }

  private once(effectId: string, apply: () => EffectOutcome): EffectOutcome {
    const first = this.effects.get(effectId);
    if (first !== undefined) {
      return first.status === 'rejected' ? first : { status: 'replayed', result: first.result };
    }
    const outcome = apply();
    this.effects.set(effectId, outcome);
    return outcome;
  }
}

const limits = { maxFileBytes: 100, maxWorkspaceBytes: 150 };

describe('executeWorkspaceTool', () => {
  let workspace: MemoryWorkspace;
  let effect = 0;
  const run = (name: WorkspaceToolName, input: unknown, effectId = `e${(effect += 1)}`): Promise<ToolResult> =>
    executeWorkspaceTool({ name, input, effectId, workspace, limits });
  const body = (result: ToolResult): unknown => JSON.parse(result.content);

  beforeEach(() => {
    workspace = new MemoryWorkspace(limits.maxWorkspaceBytes);
  });

  it('writes, reads, lists and deletes files', async () => {
    expect(await run('write_file', { path: 'notes/plan.md', content: '# Plan' })).toEqual({
      content: '{"ok":true,"path":"notes/plan.md","bytes":6}',
      isError: false,
    });
    await run('write_file', { path: 'a.txt', content: 'héllo' });
    expect(body(await run('read_file', { path: 'notes/plan.md' }))).toEqual({ ok: true, path: 'notes/plan.md', content: '# Plan' });
    expect(body(await run('list_files', {}))).toEqual({
      ok: true,
      files: [
        { path: 'a.txt', bytes: 6 },
        { path: 'notes/plan.md', bytes: 6 },
      ],
      totalBytes: 12,
      maxWorkspaceBytes: 150,
    });
    expect(body(await run('delete_file', { path: 'a.txt' }))).toEqual({ ok: true, path: 'a.txt', deleted: true });
    expect(body(await run('list_files', undefined))).toMatchObject({ files: [{ path: 'notes/plan.md' }], totalBytes: 6 });
  });

  it('lists an empty workspace', async () => {
    expect(await run('list_files', {})).toEqual({ content: '{"ok":true,"files":[],"totalBytes":0,"maxWorkspaceBytes":150}', isError: false });
  });

  it('passes the effect id to the store and gives the same result when the effect is replayed', async () => {
    const first = await run('write_file', { path: 'a.md', content: 'one' }, 'effect-1');
    workspace.files.set('a.md', 'changed since');
    const again = await run('write_file', { path: 'a.md', content: 'one' }, 'effect-1');
    expect(again).toEqual(first);
    expect(workspace.files.get('a.md')).toBe('changed since');
    expect(workspace.calls).toEqual(['write effect-1 a.md', 'write effect-1 a.md']);

    const deleted = await run('delete_file', { path: 'a.md' }, 'effect-2');
    expect(await run('delete_file', { path: 'a.md' }, 'effect-2')).toEqual(deleted);
    expect(deleted.isError).toBe(false);
  });

  it('reads through the normalised path', async () => {
    await run('write_file', { path: './docs//a.md', content: 'x' });
    expect([...workspace.files.keys()]).toEqual(['docs/a.md']);
    expect(body(await run('read_file', { path: 'docs/./a.md' }))).toEqual({ ok: true, path: 'docs/a.md', content: 'x' });
  });

  it('reports a missing file by its path', async () => {
    expect(await run('read_file', { path: 'nope/missing.md' })).toEqual({
      content: '{"ok":false,"error":"file not found: nope/missing.md"}',
      isError: true,
    });
  });

  it.each([
    ['read_file', { path: '../etc/passwd' }, 'invalid path "../etc/passwd": ".." segments are not allowed'],
    ['write_file', { path: '/abs.md', content: 'x' }, 'invalid path "/abs.md": must be relative (no leading /)'],
    ['delete_file', { path: 'a\u0000b' }, 'invalid path "a\\u0000b": control characters and invalid Unicode are not allowed'],
    ['write_file', { path: 'x'.repeat(300), content: '' }, `invalid path "${'x'.repeat(300)}": is 300 bytes, over the 256-byte limit`],
  ] as const)('%s refuses a bad path before touching the store: %j', async (name, input, message) => {
    expect(await run(name, input)).toEqual({ content: JSON.stringify({ ok: false, error: `invalid ${name} input: path: ${message}` }), isError: true });
    expect(workspace.calls).toEqual([]);
  });

  it.each([
    ['read_file', {}, 'invalid read_file input: path: is required'],
    ['read_file', { path: 3 }, 'invalid read_file input: path: must be a string'],
    ['read_file', { path: '' }, 'invalid read_file input: path: must not be empty'],
    ['write_file', { path: 'a.md' }, 'invalid write_file input: content: is required'],
    ['write_file', { path: 'a.md', content: { text: 'x' } }, 'invalid write_file input: content: must be a string'],
    ['write_file', {}, 'invalid write_file input: path: is required; content: is required'],
    ['delete_file', 'a.md', 'invalid delete_file input: expected a JSON object'],
    ['list_files', 'all', 'invalid list_files input: expected a JSON object'],
  ] as const)('%s names the invalid field: %j', async (name, input, message) => {
    expect(await run(name, input)).toEqual({ content: JSON.stringify({ ok: false, error: message }), isError: true });
    expect(workspace.calls).toEqual([]);
  });

  it('refuses a file over the per-file limit before calling the store, with the size and the limit', async () => {
    const result = await run('write_file', { path: 'big.md', content: 'é'.repeat(51) });
    expect(result).toEqual({
      content: '{"ok":false,"error":"content is 102 bytes, over the 100-byte limit per file; nothing was written"}',
      isError: true,
    });
    expect(workspace.calls).toEqual([]);
    expect((await run('write_file', { path: 'exact.md', content: 'x'.repeat(100) })).isError).toBe(false);
  });

  it('allows an empty file', async () => {
    expect((await run('write_file', { path: 'empty', content: '' })).isError).toBe(false);
    expect(body(await run('read_file', { path: 'empty' }))).toEqual({ ok: true, path: 'empty', content: '' });
  });

  it('surfaces the store refusing a write over the workspace total', async () => {
    await run('write_file', { path: 'a', content: 'x'.repeat(100) });
    expect(await run('write_file', { path: 'b', content: 'y'.repeat(60) })).toEqual({
      content: '{"ok":false,"error":"workspace full: 150-byte limit"}',
      isError: true,
    });
    expect(workspace.files.has('b')).toBe(false);
  });

  it('surfaces the store refusing a delete', async () => {
    expect(await run('delete_file', { path: 'ghost.md' })).toEqual({ content: '{"ok":false,"error":"no such file: ghost.md"}', isError: true });
  });

  it('lets failures of the store itself propagate', async () => {
    const broken: WorkspacePort = {
      list: () => Promise.reject(new Error('redis down')),
      read: () => Promise.reject(new Error('redis down')),
      write: () => Promise.reject(new Error('lease lost')),
      delete: () => Promise.reject(new Error('lease lost')),
    };
    await expect(executeWorkspaceTool({ name: 'write_file', input: { path: 'a', content: 'b' }, effectId: 'e', workspace: broken, limits })).rejects.toThrow(
      'lease lost',
    );
    await expect(executeWorkspaceTool({ name: 'list_files', input: {}, effectId: 'e', workspace: broken, limits })).rejects.toThrow('redis down');
  });
});
