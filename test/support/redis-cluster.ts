import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../scripts/ports';
import { startRedisProcess, type RedisProcess } from '../../scripts/redis-process';
import { waitFor } from './wait-for';

const run = promisify(execFile);

/** A real Redis Cluster of a test's own: `masters` nodes, no replicas, every slot covered. */
export interface RedisCluster {
  /** host:port of every master, the form of REDIS_CLUSTER_NODES. */
  readonly nodes: string[];
  /** REDIS_CLUSTER_NODES for the services: the nodes, comma-separated. */
  readonly nodesEnv: string;
  readonly dir: string;
  /** Stops every node and removes the directory. */
  destroy(): Promise<void>;
}

/**
 * Starts `masters` redis-server processes with cluster mode on (free ports, whose cluster bus port
 * +10000 is free too), joins them with `redis-cli --cluster create` and waits for cluster_state:ok
 * on every node.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-cluster-'));
  const servers: RedisProcess[] = [];
  const destroy = async (): Promise<void> => {
    await Promise.all(servers.map((server) => server.kill9()));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await clusterPort();
      servers.push(
        await startRedisProcess({
          port,
          dir,
          extraArgs: ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '5000', '--loglevel', 'warning'],
        }),
      );
    }
    const nodes = servers.map((server) => `127.0.0.1:${server.port}`);
    await run('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], { timeout: 30_000 });
    await waitFor(
      async () => {
        const states = await Promise.all(servers.map((server) => run('redis-cli', ['-p', String(server.port), 'cluster', 'info'])));
        return states.every(({ stdout }) => stdout.includes('cluster_state:ok'));
      },
      { timeoutMs: 30_000, intervalMs: 100, message: 'the cluster to reach cluster_state:ok' },
    );
    return { nodes, nodesEnv: nodes.join(','), dir, destroy };
  } catch (error) {
    await destroy();
    throw error;
  }
}

/** A free port whose cluster bus port (port + 10000) is free as well. */
function clusterPort(): Promise<number> {
  return freePort('127.0.0.1', 10_000);
}
