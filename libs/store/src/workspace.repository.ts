import type { EffectOutcome, ShellWorkspace, WorkspaceFile, WorkspacePort } from '@parley/tools';
import { LeaseLostError } from './lease.errors';
import type { Lease } from './run.types';
import type { StoreContext } from './store.context';

/** A run's workspace in Redis; writes are fenced by the lease and applied once per effect id. */
export class RedisWorkspace implements WorkspacePort, ShellWorkspace {
  constructor(
    private readonly ctx: StoreContext,
    private readonly lease: Lease,
    private readonly maxWorkspaceBytes: number,
  ) {}

  private get key(): string {
    return this.ctx.keys.workspace(this.lease.tenant, this.lease.runId);
  }

  async list(): Promise<WorkspaceFile[]> {
    const paths = await this.ctx.redis.hkeys(this.key);
    const pipeline = this.ctx.redis.pipeline();
    paths.forEach((path) => pipeline.hstrlen(this.key, path));
    const sizes = (await pipeline.exec()) ?? [];
    return paths.map((path, i) => ({ path, bytes: Number(sizes[i]?.[1] ?? 0) })).sort((a, b) => a.path.localeCompare(b.path));
  }

  read(path: string): Promise<string | null> {
    return this.ctx.redis.hget(this.key, path);
  }

  async snapshot(): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.ctx.redis.hgetall(this.key)));
  }

  recorded(effectId: string): Promise<string | null> {
    const { tenant, runId } = this.lease;
    return this.ctx.redis.hget(this.ctx.keys.effects(tenant, runId), effectId);
  }

  async commit(effectId: string, changes: { writes: Array<{ path: string; content: string }>; deletes: string[] }, result: string): Promise<EffectOutcome> {
    const { tenant, runId, token } = this.lease;
    const [status, detail] = (await this.ctx.scripts.run(
      'workspaceCommit',
      [this.ctx.keys.run(tenant, runId), this.key, this.ctx.keys.effects(tenant, runId)],
      [
        token,
        effectId,
        this.maxWorkspaceBytes,
        this.ctx.options.leaseMs,
        result,
        changes.writes.length,
        ...changes.writes.flatMap(({ path, content }) => [path, content]),
        ...changes.deletes,
      ],
    )) as [string, string?];
    return this.outcome(status, detail);
  }

  write(effectId: string, path: string, content: string): Promise<EffectOutcome> {
    return this.effect(effectId, 'write', path, content);
  }

  delete(effectId: string, path: string): Promise<EffectOutcome> {
    return this.effect(effectId, 'delete', path, '');
  }

  private async effect(effectId: string, op: 'write' | 'delete', path: string, content: string): Promise<EffectOutcome> {
    const { tenant, runId, token } = this.lease;
    const [status, detail] = (await this.ctx.scripts.run(
      'workspaceEffect',
      [this.ctx.keys.run(tenant, runId), this.key, this.ctx.keys.effects(tenant, runId)],
      [token, effectId, op, path, content, this.maxWorkspaceBytes, this.ctx.options.leaseMs],
    )) as [string, string?];
    return this.outcome(status, detail);
  }

  private outcome(status: string, detail: string | undefined): EffectOutcome {
    switch (status) {
      case 'applied':
      case 'replayed':
        return { status, result: detail ?? '' };
      case 'rejected':
        return { status, error: detail ?? 'rejected' };
      default:
        throw new LeaseLostError(this.lease.runId);
    }
  }
}
