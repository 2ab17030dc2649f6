import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUES } from '@parley/contracts';
import { ParleyQueues, type WantedSchedule } from './queues';
import { deleteKeys } from '../../../test/support/delete-keys';
import { waitFor } from '../../../test/support/wait-for';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('ParleyQueues.syncSchedules', () => {
  let redis: Redis;
  let prefix: string;
  let queues: ParleyQueues;
  let worker: { worker: Worker; connection: Redis } | undefined;

  const everySecond: WantedSchedule = { id: 'sched.ticker.tick', cron: '* * * * * *', timezone: 'UTC', data: { agent: 'ticker', schedule: 'tick' } };

  beforeEach(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    prefix = `qs-${randomUUID()}`;
    queues = new ParleyQueues(redis, prefix);
  });

  afterEach(async () => {
    await worker?.worker.close();
    worker?.connection.disconnect();
    worker = undefined;
    await queues.close();
    await deleteKeys(redis, `${prefix}:*`);
    await redis.quit();
  });

  it('re-registers a scheduler only when it changed: one left as it was keeps a firing that fell due while no worker ran', async () => {
    expect(await queues.syncSchedules([everySecond])).toEqual([]);
    const [registered] = await queues.listSchedules();
    const due = registered?.next;
    expect(typeof due).toBe('number');
    await waitFor(() => Date.now() > Number(due) + 200, { message: 'the first firing to be overdue' });

    // What a restarted interaction-service does before its worker runs.
    const daily: WantedSchedule = { id: 'sched.reporter.daily', cron: '0 9 * * *', timezone: 'UTC', data: { agent: 'reporter', schedule: 'daily' } };
    expect(await queues.syncSchedules([everySecond, daily])).toEqual([]);

    const fired: string[] = [];
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    worker = { connection, worker: new Worker(QUEUES.schedules, (job) => Promise.resolve(void fired.push(String(job.id))), { connection, prefix }) };
    await waitFor(() => fired.length > 0, { message: 'a firing to run' });
    expect(fired[0]).toBe(`repeat:${everySecond.id}:${due}`);

    // A changed time zone, cron or data is registered.
    const inUtc = (await queues.schedules.getJobScheduler(daily.id))?.next;
    const inBerlin = { ...daily, timezone: 'Europe/Berlin' };
    expect(await queues.syncSchedules([everySecond, inBerlin])).toEqual([]);
    expect(await queues.schedules.getJobScheduler(daily.id)).toMatchObject({ pattern: '0 9 * * *', tz: 'Europe/Berlin' });
    expect((await queues.schedules.getJobScheduler(daily.id))?.next).not.toBe(inUtc);

    const atTen = { ...inBerlin, cron: '0 10 * * *', data: { agent: 'reporter', schedule: 'daily-too' } };
    expect(await queues.syncSchedules([everySecond, atTen])).toEqual([]);
    expect(await queues.schedules.getJobScheduler(daily.id)).toMatchObject({ pattern: '0 10 * * *', template: { data: atTen.data } });

    // A macro is registered as the scheduler reads it: @hourly fires at the next full hour.
    const hourly: WantedSchedule = { id: 'sched.reporter.hourly', cron: '@hourly', timezone: 'UTC', data: { agent: 'reporter', schedule: 'hourly' } };
    expect(await queues.syncSchedules([everySecond, atTen, hourly])).toEqual([]);
    const next = (await queues.schedules.getJobScheduler(hourly.id))?.next;
    expect(next).toBe(Math.ceil(Date.now() / 3_600_000) * 3_600_000);
  });
});
