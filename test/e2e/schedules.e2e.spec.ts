import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { jobIds, type ScheduleJob } from '@parley/contracts';
import { ParleyQueues } from '@parley/store';
import { SchedulesProcessor, scheduledRunId } from '../../apps/interaction-service/src/schedules/schedules.processor';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

const ticker = {
  name: 'ticker',
  model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'finish', input: { summary: 'ticked' } }] }] },
  tools: ['finish'],
  limits: { max_iterations: 3 },
  schedules: [
    { name: 'acme-tick', cron: '* * * * * *', tenant: 'acme', owner: 'cron-bot', task: 'tick for acme' },
    { name: 'other-tick', cron: '* * * * * *', timezone: 'Europe/Berlin', tenant: 'other', task: 'tick for other' },
  ],
};

// Schedules of tenant `quiet` never fire during the tests (January 1st): the tests fire them by hand.
const NEVER = '0 0 1 1 *';

/** An anthropic agent: no process of this stack has a key for it. */
const claude = {
  name: 'claude',
  model: { provider: 'anthropic', name: 'claude-test', max_tokens: 256 },
  tools: ['finish'],
  schedules: [{ name: 'nightly', cron: NEVER, tenant: 'quiet', task: 'summarise the night' }],
};

/** A scheduled run that parks on a question (its stage keeps the human tool in an unattended run). */
const pauser = {
  name: 'pauser',
  model: {
    provider: 'scripted',
    turns: [{ tool_calls: [{ name: 'ask_user_text', input: { question: 'Go on?' } }] }, { tool_calls: [{ name: 'finish', input: { summary: 'went on' } }] }],
  },
  tools: ['ask_user_text', 'finish'],
  stages: [{ name: 'only', required_tools: ['ask_user_text'] }],
  limits: { max_iterations: 5, interaction_timeout_secs: 0 },
  schedules: [{ name: 'ask', cron: NEVER, timezone: 'Europe/Berlin', tenant: 'quiet', task: 'ask once' }],
};

describe('schedules', () => {
  let stack: TestStack;
  const admin = (tenant = 'acme') => stack.token({ tenant, sub: 'root', role: 'admin' });
  const runs = async (token: string) => (await stack.http<{ runs: any[] }>('GET', '/v1/runs?limit=100', undefined, token)).body.runs;

  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([ticker, claude, pauser]), overrides: { anthropicApiKey: undefined } });
  });

  // The job schedulers live under the stack's prefix and stop with the interaction-service, so
  // nothing fires again after close and no key is left behind.
  afterAll(async () => {
    const { prefix, redisUrl } = stack.config;
    await stack.close();
    const redis = new Redis(redisUrl);
    try {
      const left: string[] = [];
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        left.push(...keys);
      } while (cursor !== '0');
      expect(left).toEqual([]);
    } finally {
      await redis.quit();
    }
  });

  it("starts an unattended run for each firing, owned as the schedule says, in the schedule's tenant", async () => {
    const run = await waitFor(async () => (await runs(admin())).find((r) => r.trigger === 'schedule' && r.status === 'finished'), {
      timeoutMs: 20_000,
      message: 'a scheduled run of acme to finish',
    });
    expect(run).toMatchObject({ agent: 'ticker', task: 'tick for acme', owner: 'cron-bot', unattended: true, tenant: 'acme', summary: 'ticked' });
    expect(run.id).toMatch(/^[0-9a-f]{32}$/);

    const other = await waitFor(async () => (await runs(admin('other'))).find((r) => r.trigger === 'schedule'), { message: 'a scheduled run of other' });
    expect(other).toMatchObject({ owner: 'parley:scheduler', task: 'tick for other', tenant: 'other' });
    expect((await runs(admin())).map((r) => r.task)).not.toContain('tick for other');
  });

  it("lists the caller's tenant's schedules with their next firing, to admins and services only", async () => {
    const listed = await stack.http('GET', '/v1/schedules', undefined, admin());
    expect(listed.status).toBe(200);
    // A schedule without a timezone runs in UTC, whatever the host's zone, and says so.
    expect(listed.body.schedules).toEqual([
      { agent: 'ticker', name: 'acme-tick', cron: '* * * * * *', timezone: 'UTC', owner: 'cron-bot', task: 'tick for acme', next: expect.any(String) },
    ]);
    expect(Number.isNaN(Date.parse(listed.body.schedules[0].next))).toBe(false);

    const service = await stack.http('GET', '/v1/schedules', undefined, stack.token({ tenant: 'other', sub: 'svc', role: 'service' }));
    expect(service.status).toBe(200);
    expect(service.body.schedules).toEqual([expect.objectContaining({ name: 'other-tick', timezone: 'Europe/Berlin', owner: 'parley:scheduler' })]);

    const member = await stack.http('GET', '/v1/schedules', undefined, stack.token({ role: 'member' }));
    expect(member.status).toBe(403);
    expect(member.body.error.code).toBe('forbidden');
  });

  it('a firing processed again starts no second run; a schedule no longer configured starts none', async () => {
    const processor = stack.interactions!.get(SchedulesProcessor);
    const firing = { id: 'repeat:sched.ticker.acme-tick:1700000000000', data: { agent: 'ticker', schedule: 'acme-tick' } } as Job<ScheduleJob>;
    const runId = scheduledRunId(firing.id!);
    expect(await processor.process(firing)).toBe(`started run ${runId}`);
    expect(await processor.process(firing)).toBe(`run ${runId} already started`);
    const run = await waitFor(async () => {
      const body = await stack.run(runId, admin());
      return body.run?.status === 'finished' ? body.run : undefined;
    }, { message: `run ${runId} to finish` });
    expect(run).toMatchObject({ trigger: 'schedule', owner: 'cron-bot', unattended: true });
    const log = (await stack.http<{ entries: any[] }>('GET', `/v1/runs/${runId}/log`, undefined, admin())).body.entries;
    expect(log.filter((e) => e.type === 'task')).toHaveLength(1);

    const gone = { id: 'repeat:sched.ticker.gone:1700000000000', data: { agent: 'ticker', schedule: 'gone' } } as Job<ScheduleJob>;
    expect(await processor.process(gone)).toContain('no longer configured');
    const missingAgent = { id: 'repeat:sched.nobody.x:1700000000000', data: { agent: 'nobody', schedule: 'x' } } as Job<ScheduleJob>;
    expect(await processor.process(missingAgent)).toContain('no longer configured');
  });

  it('a restarted interaction-service drops schedulers no longer configured and keeps the others', async () => {
    const queues = stack.interactions!.get(ParleyQueues);
    await queues.schedules.upsertJobScheduler('sched.ticker.removed', { pattern: '0 0 1 1 *' }, { name: 'schedule', data: { agent: 'ticker', schedule: 'removed' } });
    expect((await queues.listSchedules()).map((s) => s.id)).toContain('sched.ticker.removed');
    await stack.stopInteractions();
    await stack.startInteractions();
    const ids = (await stack.interactions!.get(ParleyQueues).listSchedules()).map((s) => s.id).sort();
    expect(ids).toEqual(['sched.claude.nightly', 'sched.pauser.ask', 'sched.ticker.acme-tick', 'sched.ticker.other-tick']);
  });

  it("registers and lists an anthropic agent's schedules without a key; the loop-worker without one fails the run, saying why", async () => {
    const listed = await stack.http('GET', '/v1/schedules', undefined, admin('quiet'));
    expect(listed.body.schedules).toEqual([
      { agent: 'claude', name: 'nightly', cron: NEVER, timezone: 'UTC', owner: 'parley:scheduler', task: 'summarise the night', next: expect.any(String) },
      { agent: 'pauser', name: 'ask', cron: NEVER, timezone: 'Europe/Berlin', owner: 'parley:scheduler', task: 'ask once', next: expect.any(String) },
    ]);

    const processor = stack.interactions!.get(SchedulesProcessor);
    const firing = { id: 'repeat:sched.claude.nightly:1700000000000', data: { agent: 'claude', schedule: 'nightly' } } as Job<ScheduleJob>;
    const runId = scheduledRunId(firing.id!);
    expect(await processor.process(firing)).toBe(`started run ${runId}`);
    const run = await waitFor(async () => {
      const body = await stack.run(runId, admin('quiet'));
      return body.run?.status === 'failed' ? body.run : undefined;
    }, { message: `run ${runId} to fail` });
    expect(run).toMatchObject({ agent: 'claude', trigger: 'schedule', unattended: true, error: expect.stringMatching(/anthropic model provider.*ANTHROPIC_API_KEY is not set/) });
  });

  it("a firing processed again re-enqueues its queued run at the run's current wake, not its first", async () => {
    const processor = stack.interactions!.get(SchedulesProcessor);
    const queues = stack.interactions!.get(ParleyQueues);
    const firing = { id: 'repeat:sched.pauser.ask:1700000000000', data: { agent: 'pauser', schedule: 'ask' } } as Job<ScheduleJob>;
    const runId = scheduledRunId(firing.id!);
    expect(await processor.process(firing)).toBe(`started run ${runId}`);
    const question = await stack.waitForQuestion(runId, 20_000, admin('quiet'));

    // The answer wakes the run (wake 1) and its job is lost, as when the enqueue died; the job of
    // wake 0 is still kept as completed, so enqueueing wake 0 again would add nothing.
    await stack.stopWorker();
    expect((await stack.answer(question.id, { text: 'yes' }, admin('quiet'))).status).toBe(200);
    const woken = jobIds.run({ tenant: 'quiet', runId, wake: 1 });
    expect(await queues.runs.getJob(woken)).toBeDefined();
    await queues.runs.remove(woken);

    expect(await processor.process(firing)).toBe(`run ${runId} already started`);
    expect(await queues.runs.getJob(woken)).toBeDefined();
    await stack.startWorker();
    const done = await waitFor(async () => {
      const body = await stack.run(runId, admin('quiet'));
      return body.run?.status === 'finished' ? body.run : undefined;
    }, { message: `run ${runId} to finish` });
    expect(done.summary).toBe('went on');
  });
});
