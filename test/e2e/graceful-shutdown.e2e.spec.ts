import { startFakeAnthropic, type FakeAnthropic, type FakeReply } from '../support/fake-anthropic';
import { RedisKeys } from '@parley/store';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

const finishTurn: FakeReply = { toolCalls: [{ name: 'finish', input: { summary: 'done' } }] };

/** A model call the test holds open until it says so. */
function heldReply(): { promise: Promise<FakeReply>; release: () => void } {
  let release = (): void => {};
  const promise = new Promise<FakeReply>((resolve) => {
    release = () => resolve(finishTurn);
  });
  return { promise, release };
}

describe('graceful shutdown of a loop-worker (SIGTERM → app.close())', () => {
  let fake: FakeAnthropic;
  let stack: TestStack;
  let held: ReturnType<typeof heldReply>;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    stack = await TestStack.start({
      agentsDir: writeAgents([
        { name: 'slow', model: { provider: 'anthropic', name: 'claude-test', max_tokens: 256 }, tools: ['finish'], limits: { max_iterations: 5 } },
      ]),
      overrides: { anthropicApiKey: 'test-key', anthropicBaseUrl: fake.url, modelMaxRetries: 0, shutdownGraceMs: 300 },
    });
  });
  beforeEach(() => {
    fake.reset();
    held = heldReply();
    // The first call of each test hangs until released; later ones finish at once.
    fake.setResponder((_body, index) => (index === 0 ? held.promise : finishTurn));
  });
  afterAll(async () => {
    held.release();
    await stack.close();
    await fake.close();
  });

  it('hands a run whose model call outlives the grace period back to the queue; another worker finishes it', async () => {
    const runId = await stack.startRun('slow');
    await fake.waitForRequests(1);
    await stack.waitForStatus(runId, 'running');

    await stack.stopWorker();
    const released = await stack.run(runId);
    expect(released.run.status).toBe('queued');
    expect(await stack.redis.hget(new RedisKeys(stack.config.prefix).run('acme', runId), 'lease')).toBeNull();
    expect((await stack.log(runId)).filter((entry) => entry.type === 'assistant')).toHaveLength(0);

    await stack.startWorker();
    await stack.waitForStatus(runId, 'finished');
    expect(fake.requests).toHaveLength(2);
    expect((await stack.log(runId)).filter((entry) => entry.type === 'assistant')).toHaveLength(1);
  });

  it('lets a step that ends within the grace period finish before the worker exits', async () => {
    await stack.stopWorker();
    await stack.startWorker({ shutdownGraceMs: 60_000 });
    const runId = await stack.startRun('slow');
    await fake.waitForRequests(1);

    const stopping = stack.stopWorker();
    await waitFor(() => fake.calls[0]?.status === 0, { message: 'the held call still open' });
    held.release();
    await stopping;

    expect((await stack.run(runId)).run.status).toBe('finished');
    expect(fake.requests).toHaveLength(1);
    await stack.startWorker();
  });

  it('a stop asked while the run was mid-call ends it as its worker shuts down: it is not handed back, and no further model call is made', async () => {
    const runId = await stack.startRun('slow');
    await fake.waitForRequests(1);
    await stack.waitForStatus(runId, 'running');
    // A run a worker holds is only flagged; the worker, shutting down, ends it rather than hand it back.
    expect((await stack.http('POST', `/v1/runs/${runId}/stop`)).body.run).toMatchObject({ status: 'running' });
    await stack.stopWorker();
    expect((await stack.run(runId)).run).toMatchObject({ status: 'cancelled', stoppedBy: { kind: 'user', subject: 'alice' } });

    await stack.startWorker();
    expect(fake.requests).toHaveLength(1);
  });
});
