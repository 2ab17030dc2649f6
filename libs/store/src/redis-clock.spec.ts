import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { compileHook } from '../../../test/harness/harness';
import { shiftedClock } from '../../../test/support/faketime';
import { startRedisServer } from '../../../test/support/redis-server';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROOT = resolve(__dirname, '..', '..', '..');

/** In a process of its own, whose wall clock is `shift` off (libfaketime): what its RedisClock reads, and its own clock, a second in. */
const READ = `
const { createRedis } = require('@parley/platform');
const { RedisClock } = require(${JSON.stringify(join(__dirname, 'redis-clock.ts'))});
const redis = createRedis(process.env.CLOCK_REDIS_URL);
const clock = new RedisClock(redis);
// After the clock's own listener has sent its TIME: the reply waits behind this.
redis.once('ready', () => {
  const until = Date.now() + Number(process.env.CLOCK_BUSY_MS);
  while (Date.now() < until) {}
});
setTimeout(() => {
  process.stdout.write(JSON.stringify({ clock: clock.nowMs(), host: Date.now() }));
  redis.disconnect();
}, 1000);
`;

/**
 * The first TIME waits behind a script that keeps Redis busy 1.2 s (sent first, on the same
 * connection, by a listener registered before the clock's), so Redis reads its clock at the end of
 * the round trip, not in its middle: the first reading is about 600 ms ahead. A reconnect then
 * measures again, quickly, placing Redis about 600 ms earlier. Prints the reading before, Redis's
 * TIME then, and the reading after.
 */
const NEVER_BACK = `
const { createRedis } = require('@parley/platform');
const { RedisClock } = require(${JSON.stringify(join(__dirname, 'redis-clock.ts'))});
const redis = createRedis(process.env.CLOCK_REDIS_URL);
const SPIN = "local s = redis.call('TIME') repeat local n = redis.call('TIME') until (n[1] - s[1]) * 1e6 + n[2] - s[2] > 1200000 return 1";
redis.once('ready', () => void redis.eval(SPIN, 0));
const clock = new RedisClock(redis);
const ready = () => new Promise((resolve) => redis.once('ready', resolve)).then(() => redis.ping());
(async () => {
  await ready();
  const ahead = clock.nowMs();
  const [seconds, micros] = await redis.time();
  redis.disconnect(true);
  await ready();
  const after = clock.nowMs();
  process.stdout.write(JSON.stringify({ ahead, redis: Number(seconds) * 1000 + Number(micros) / 1000, after }));
  redis.disconnect();
})();
`;

describe('RedisClock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-clock-'));
  const hook = compileHook(dir);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    { shift: '+20s', busy: 0 },
    { shift: '-20s', busy: 0 },
    { shift: '+0', busy: 0 },
    // Its event loop busy as its first measurement is answered (a start on a loaded host): the slow
    // measurement is still far closer than its own clock.
    { shift: '+20s', busy: 300 },
  ])("reads Redis's clock in a process whose own clock is $shift off (event loop busy $busy ms at the first reading)", async ({ shift, busy }) => {
    const { stdout } = await promisify(execFile)(process.execPath, ['-r', hook, '-e', READ], {
      cwd: ROOT,
      env: { ...process.env, ...shiftedClock(shift), CLOCK_REDIS_URL: REDIS_URL, CLOCK_BUSY_MS: String(busy), PARLEY_HARNESS_ROOT: ROOT, PARLEY_HARNESS_PARENT_PID: String(process.pid), LOG_LEVEL: 'silent' },
      timeout: 30_000,
    });
    const read = JSON.parse(stdout) as { clock: number; host: number };
    // Redis runs on this host: its clock is this process's.
    expect(Math.abs(read.clock - Date.now())).toBeLessThan(1500);
    expect(Math.round((read.host - read.clock) / 1000) + 0).toBe(Number.parseInt(shift, 10));
  });

  it('never reads back when a closer measurement places Redis a little earlier than the first did', async () => {
    const server = await startRedisServer();
    try {
      // Its own clock 20 s off, so the clock goes by Redis's TIME and not by the host's.
      const { stdout } = await promisify(execFile)(process.execPath, ['-r', hook, '-e', NEVER_BACK], {
        cwd: ROOT,
        env: { ...process.env, ...shiftedClock('+20s'), CLOCK_REDIS_URL: server.url, PARLEY_HARNESS_ROOT: ROOT, PARLEY_HARNESS_PARENT_PID: String(process.pid), LOG_LEVEL: 'silent' },
        timeout: 30_000,
      });
      const read = JSON.parse(stdout) as { ahead: number; redis: number; after: number };
      expect(read.ahead - read.redis).toBeGreaterThan(300);
      expect(read.after).toBeGreaterThanOrEqual(read.ahead);
    } finally {
      await server.destroy();
    }
  });
});
