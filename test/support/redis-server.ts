import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../scripts/ports';
import { RedisStartError, startRedisProcess, type AppendFsync, type RedisProcess } from '../../scripts/redis-process';

export interface RedisServerOptions {
  /** @defaultValue false */
  appendonly?: boolean;
  /** @defaultValue 'everysec' */
  appendfsync?: AppendFsync;
  /** Extra environment of the server, e.g. {@link shiftedClock}'s. */
  env?: Record<string, string>;
}

/** A real redis-server of a test's own, for fault tests (crash, restart, persistence). */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** The pid of the current process; changes on restart. */
  readonly pid: number;
  /** Its data directory, a fresh temp dir. */
  readonly dir: string;
  /** Graceful SIGTERM (Redis flushes its AOF); resolves once the process has exited. */
  stop(): Promise<void>;
  /** SIGKILL, like a crash; resolves once the process has exited. */
  kill9(): Promise<void>;
  /** Stops it if running, then starts it again on the same port and dir: data survives when AOF is on. */
  restart(): Promise<void>;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-redis-'));
  const launch = (port: number): Promise<RedisProcess> =>
    startRedisProcess({ port, dir, appendonly: options.appendonly, appendfsync: options.appendfsync, env: options.env });

  let current = await launchOnFreePort(launch);
  const port = current.port;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    get pid() {
      return current.pid;
    },
    async stop() {
      await current.stop();
    },
    kill9: () => current.kill9(),
    async restart() {
      await current.stop();
      current = await launch(port);
    },
    async destroy() {
      await current.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Another process may take the port between probing and binding it: then try another one. */
async function launchOnFreePort(launch: (port: number) => Promise<RedisProcess>): Promise<RedisProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(await freePort());
    } catch (error) {
      if (attempt >= 5 || !(error instanceof RedisStartError) || !/address already in use/i.test(error.output)) {
        throw error;
      }
    }
  }
}
