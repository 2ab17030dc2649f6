import { mkdtempSync, existsSync, renameSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Redis } from 'ioredis';
import { ensureRedis, type DevRedis } from '../scripts/dev-redis';
import { freePort } from '../scripts/ports';

/** The Redis `npm start` runs when none answers at REDIS_URL (scripts/dev-redis.ts). */
describe("npm start's own Redis", () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-dev-redis-'));
  const started: DevRedis[] = [];
  const said: string[] = [];
  const options = { dataDir, log: (line: string) => said.push(line), onRedisLine: () => undefined };

  afterAll(async () => {
    await Promise.all(started.map(async (redis) => redis.server?.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(url: string): Promise<DevRedis> {
    const redis = await ensureRedis(url, options);
    started.push(redis);
    return redis;
  }

  it("keeps its data in a folder of its port's, and takes over the data an earlier release kept for every port", async () => {
    const first = await start(`redis://127.0.0.1:${await freePort()}`);
    const firstPort = new URL(first.url).port;
    const client = new Redis(first.url);
    await client.set('kept', 'yes');
    await client.quit();
    expect(await first.server?.stop()).toBe('stopped');
    expect(existsSync(join(dataDir, firstPort, 'appendonlydir'))).toBe(true);

    // As an earlier release left it: one folder, whatever the port.
    renameSync(join(dataDir, firstPort, 'appendonlydir'), join(dataDir, 'appendonlydir'));
    const port = await freePort();
    const second = await start(`redis://127.0.0.1:${port}`);
    expect(said).toContain(`moved the data of an earlier npm start to ${relative(process.cwd(), join(dataDir, String(port)))}`);
    const reader = new Redis(second.url);
    expect(await reader.get('kept')).toBe('yes');
    await reader.quit();
  });

  it('starts on a free port when its port is held by something that is not Redis, saying so in plain words', async () => {
    const http = createServer((_req, res) => res.end('hello'));
    const port = await freePort();
    await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
    try {
      const redis = await start(`redis://127.0.0.1:${port}`);
      expect(new URL(redis.url).port).not.toBe(String(port));
      expect(said.find((line) => line.startsWith(`port ${port} is held`))).toMatch(/^port \d+ is held by something that is not a usable Redis \(it does not speak Redis\); starting Redis on port \d+ instead$/);
      expect(said.join('\n')).not.toContain('Please report this');
    } finally {
      http.close();
    }
  });
});
