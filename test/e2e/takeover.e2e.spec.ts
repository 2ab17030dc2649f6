/**
 * Worker takeover and fencing across OS processes: three loop-workers with the default lease
 * (PARLEY_LEASE_MS unset). The run's first step calls a tool whose HTTP request the test holds, so
 * the test sees exactly when a worker is in the middle of a step and which one it is.
 */
import type { LogEntry } from '@parley/contracts';
import { Harness } from '../harness/harness';
import { HeldRequestServer, type HeldRequest } from '../harness/held-request.server';
import { waitFor } from '../support/wait-for';

function slowAgent(host: string, name = 'slow', request: Record<string, unknown> = {}) {
  return {
    name,
    model: {
      provider: 'scripted',
      turns: [
        { text: 'Fetching.', tool_calls: [{ name: 'http_request', input: { url: `http://${host}/work`, ...request } }] },
        { tool_calls: [{ name: 'ask_user_text', input: { question: 'Ship it?' } }] },
        { tool_calls: [{ name: 'finish', input: { summary: 'got: {{last_answer}}' } }] },
      ],
    },
    tools: ['http_request', 'ask_user_text', 'finish'],
    permissions: { http_request: 'allow' },
    http: { allowed_hosts: [host], timeout_secs: 120 },
    limits: { max_iterations: 5, interaction_timeout_secs: 0 },
  };
}

const ofType = <T extends LogEntry['type']>(log: LogEntry[], type: T) => log.filter((e): e is Extract<LogEntry, { type: T }> => e.type === type);

describe('worker takeover across processes (default lease)', () => {
  let h: Harness;
  let tool: HeldRequestServer;

  beforeAll(async () => {
    tool = await HeldRequestServer.start();
    const poster = slowAgent(tool.host, 'poster', { method: 'POST', body: '{"order":42}', headers: { 'content-type': 'application/json' } });
    // At debug, a worker that lost its run also shows BullMQ's repeats of it, which a test waits for.
    h = await Harness.start({ name: 'takeover', gateways: 1, workers: 3, interactionServices: 1, agents: [slowAgent(tool.host), poster], logLevel: 'debug' });
  });

  afterAll(async () => {
    await h?.close();
    await tool?.close();
  });

  /** Starts a run and returns the tool request of its first step, with the worker that sent it. */
  async function runInMidStep(agent = 'slow'): Promise<{ runId: string; first: HeldRequest; holder: string }> {
    const seen = tool.requests.length;
    const runId = await h.startRun(1, agent);
    const first = await tool.next(seen);
    const holder = (await h.runHash(runId)).worker;
    expect(holder).toMatch(/^worker-\d$/);
    return { runId, first, holder };
  }

  async function answerAndFinish(runId: string, text: string): Promise<LogEntry[]> {
    const interactionId = await waitFor(() => h.openQuestion(runId), { message: `run ${runId} to park on its open question` });
    await h.answer(1, interactionId!, { text });
    await waitFor(async () => (await h.runHash(runId)).status === 'finished', { message: `run ${runId} to finish` });
    expect((await h.runHash(runId)).summary).toBe(`got: ${text}`);
    return h.runLog(runId);
  }

  /** One of each: the turns the script plays, the tool result, the question and its answer. */
  function expectEachStepOnce(log: LogEntry[], effectId: string, body: string): void {
    expect(ofType(log, 'assistant')).toHaveLength(3);
    const results = ofType(log, 'tool_result').filter((e) => e.effectId === effectId);
    expect(results).toHaveLength(1);
    expect(results[0].content).toContain(body);
    expect(ofType(log, 'question')).toHaveLength(1);
    expect(ofType(log, 'answer')).toHaveLength(1);
  }

  it('resumes the run of a worker killed mid-step on another worker, within seconds', () =>
    h.diagnose(async () => {
      const { runId, first, holder } = await runInMidStep();
      const killedAt = Date.now();
      const exit = await h.workerById(holder).kill9();
      expect(exit?.signal).toBe('SIGKILL');

      // The new holder settles the same tool call again: same effect id, no new model turn.
      const again = await tool.next(first.n, 30_000);
      const takeoverMs = again.at - killedAt;
      const taker = (await h.runHash(runId)).worker;
      h.report(`kill -9 of ${holder} mid-step: ${taker} resumed run ${runId} after ${takeoverMs} ms (default lease, PARLEY_LEASE_MS unset)`);
      expect(taker).not.toBe(holder);
      // The taker's log says whose run it took over.
      await h.workerById(taker).waitForLine((line) => line.includes(runId) && line.includes('run taken over: the lease'));
      expect(h.workerById(taker).jsonLines(0).filter((line) => line.runId === runId && line.from !== undefined)).toEqual([
        expect.objectContaining({ level: 40, from: holder, worker: taker, msg: 'run taken over: the lease of the worker that held it ran out' }),
      ]);
      expect(again.idempotencyKey).toBe(first.idempotencyKey);
      // The configured bound is ~4 s (3 s lease, then the stalled checks); the margin absorbs a loaded machine.
      expect(takeoverMs).toBeLessThan(15_000);
      again.respond(200, 'done by the new worker');

      const log = await answerAndFinish(runId, 'yes');
      expectEachStepOnce(log, first.idempotencyKey, 'done by the new worker');

      await h.workerById(holder).restart();
      expect(h.unexpectedExits()).toEqual([]);
    }));

  it('a stop asked of a run whose worker is then killed mid-step: the worker that takes it over ends it, and runs nothing of it', () =>
    h.diagnose(async () => {
      const { runId, first, holder } = await runInMidStep();
      const stop = await fetch(`${h.gateway(1).url}/v1/runs/${runId}/stop`, { method: 'POST', headers: { authorization: `Bearer ${h.token()}` } });
      expect(stop.status).toBe(200);
      // Held: the stop is only flagged, for its worker to see at its next step.
      expect(await h.runHash(runId)).toMatchObject({ status: 'running', cancel: '1' });
      await h.workerById(holder).kill9();

      await waitFor(async () => (await h.runHash(runId)).status === 'cancelled', { message: `run ${runId} to be cancelled by the worker that took it over`, timeoutMs: 30_000 });
      // The tool call its last turn left unsettled was not sent again.
      expect(tool.requests.filter((request) => request.idempotencyKey === first.idempotencyKey)).toHaveLength(1);
      expect(ofType(await h.runLog(runId), 'tool_result')).toEqual([]);
      await h.workerById(holder).restart();
      expect(h.unexpectedExits()).toEqual([]);
    }));

  it('a POST whose worker is killed mid-request is not sent again: the worker that takes over tells the model it may have been received', () =>
    h.diagnose(async () => {
      const { runId, first, holder } = await runInMidStep('poster');
      await h.workerById(holder).kill9();

      const log = await answerAndFinish(runId, 'go on');
      expect(tool.requests.filter((request) => request.idempotencyKey === first.idempotencyKey)).toHaveLength(1);
      const [result] = ofType(log, 'tool_result').filter((entry) => entry.effectId === first.idempotencyKey);
      expect(JSON.parse(result.content)).toEqual({ ok: false, error: expect.stringContaining('the server may or may not have received it, and it is not sent again') });
      await h.workerById(holder).restart();
      expect(h.unexpectedExits()).toEqual([]);
    }));

  it('SIGTERM mid-step: the worker finishes its step and exits; nothing is lost or repeated', () =>
    h.diagnose(async () => {
      const { runId, first, holder } = await runInMidStep();
      const worker = h.workerById(holder);
      const stopping = worker.stop(30_000);
      first.respond(200, 'finished during shutdown');
      expect(await stopping).toBe('stopped');

      // The step it was in was recorded once, and no other worker called the tool again.
      const log = await answerAndFinish(runId, 'done');
      expectEachStepOnce(log, first.idempotencyKey, 'finished during shutdown');
      expect(tool.requests.filter((request) => request.idempotencyKey === first.idempotencyKey)).toHaveLength(1);
      await worker.restart();
      expect(h.unexpectedExits()).toEqual([]);
    }));

  it('fences a paused worker: once another took over, it appends nothing when it wakes up', () =>
    h.diagnose(async () => {
      const { runId, first, holder } = await runInMidStep();
      const old = h.workerById(holder);
      const mark = old.lineMark;
      old.pause();
      const pausedAt = Date.now();

      const again = await tool.next(first.n, 30_000);
      const taker = (await h.runHash(runId)).worker;
      h.report(`SIGSTOP of ${holder} mid-step: ${taker} took run ${runId} over after ${again.at - pausedAt} ms`);
      expect(taker).not.toBe(holder);
      expect(again.idempotencyKey).toBe(first.idempotencyKey);
      again.respond(200, 'result for the new worker');
      // The new holder goes on: records the result, plays the next turn and parks on the question.
      await waitFor(async () => (await h.runHash(runId)).status === 'waiting', { message: `run ${runId} to park under ${taker}` });
      const before = await h.runLog(runId);

      // The old worker wakes up in the middle of its step and gets its (stale) tool result.
      first.respond(200, 'result for the old worker');
      old.resume();
      const stopped = await old.waitForLine((line) => line.includes(runId) && line.includes('another worker took the run over'), { after: mark });
      expect(JSON.parse(stopped)).toMatchObject({ worker: holder, runId, outcome: 'lost' });
      expect(await h.runLog(runId)).toEqual(before);
      expect(JSON.stringify(await h.tenantEvents())).not.toContain('result for the old worker');

      const log = await answerAndFinish(runId, 'ship');
      expect(JSON.stringify(log)).not.toContain('result for the old worker');
      expectEachStepOnce(log, first.idempotencyKey, 'result for the new worker');
      expect(old.running).toBe(true);
      expect(h.unexpectedExits()).toEqual([]);
    }));

  it('a paused worker that lost its run says so once, at warn: a takeover pages no one', () =>
    h.diagnose(async () => {
      const { runId, first, holder } = await runInMidStep();
      const old = h.workerById(holder);
      const mark = old.lineMark;
      old.pause();
      const again = await tool.next(first.n, 30_000);
      again.respond(200, 'result for the new worker');
      await waitFor(async () => (await h.runHash(runId)).status === 'waiting', { message: `run ${runId} to park under the worker that took it over` });

      first.respond(200, 'result for the old worker');
      old.resume();
      // BullMQ's last word on the lost job: the retry its refused completion asks for, refused too.
      await old.waitForLine((line) => line.includes(runId) && line.includes('moveToDelayed'), { after: mark });
      const logged = old.jsonLines(mark);
      expect(logged.filter((line) => (line.level as number) >= 50)).toEqual([]);
      expect(logged.filter((line) => line.level === 40 && line.runId === runId && line.jobId !== undefined)).toEqual([
        expect.objectContaining({ tenant: h.tenant, runId, msg: 'run taken over by another worker: this worker lost its job lock', jobId: expect.stringContaining(runId) }),
      ]);
    }));
});
