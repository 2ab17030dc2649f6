import type { LogEntry } from '@parley/contracts';
import { ParleyStore, RedisKeys } from '@parley/store';
import { startFakeAnthropic, systemText, type FakeAnthropic } from '../support/fake-anthropic';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

const call = (name: string, input: Record<string, unknown>) => ({ tool_calls: [{ name, input }] });
const finish = call('finish', { summary: 'done: {{last_answer}}' });

describe('run control: messages, stop, unattended runs, sub-agents', () => {
  let fake: FakeAnthropic;
  let stack: TestStack;

  beforeAll(async () => {
    fake = await startFakeAnthropic({ apiKey: 'test-key' });
    stack = await TestStack.start({
      overrides: { anthropicApiKey: 'test-key', anthropicBaseUrl: fake.url, modelMaxRetries: 1 },
      agentsDir: writeAgents([
        {
          name: 'talker',
          model: { provider: 'scripted', turns: [call('ask_user_text', { question: 'Which colour?' }), call('list_files', {}), finish] },
          tools: ['ask_user_text', 'list_files', 'finish'],
          limits: { max_iterations: 10, interaction_timeout_secs: 0 },
        },
        {
          name: 'focused',
          model: {
            provider: 'scripted',
            turns: [call('ask_user_text', { question: 'Go?' }), call('complete_stage', { output: 'drafted' }), call('list_files', {}), finish],
          },
          tools: ['ask_user_text', 'list_files', 'finish'],
          stages: [
            { name: 'draft', accepts_messages: false, transitions: ['polish'] },
            { name: 'polish', prompt: 'Polish it.' },
          ],
          limits: { max_iterations: 10, interaction_timeout_secs: 0 },
        },
        {
          name: 'quiet',
          model: { provider: 'scripted', turns: [call('ask_user_text', { question: 'Ready?' }), finish] },
          tools: ['ask_user_text', 'finish'],
          stages: [{ name: 'only', accepts_messages: false }],
          limits: { max_iterations: 5, interaction_timeout_secs: 0 },
        },
        {
          name: 'sleeper',
          model: { provider: 'scripted', turns: [call('shell', { command: 'sleep 1' }), call('shell', { command: 'echo never' }), finish] },
          tools: ['shell', 'finish'],
          permissions: { shell: 'allow' },
          limits: { max_iterations: 10 },
        },
        {
          name: 'pair',
          model: {
            provider: 'scripted',
            turns: [{ tool_calls: [{ name: 'shell', input: { command: 'sleep 1' } }, { name: 'shell', input: { command: 'echo never' } }] }, finish],
          },
          tools: ['shell', 'finish'],
          permissions: { shell: 'allow' },
          limits: { max_iterations: 10 },
        },
        {
          name: 'claude',
          model: { provider: 'anthropic', name: 'claude-test', max_tokens: 512 },
          tools: ['ask_user_text', 'ask_user_confirm', 'write_file', 'finish'],
          stages: [{ name: 'only', required_tools: ['ask_user_confirm'] }],
          limits: { max_iterations: 5, interaction_timeout_secs: 0 },
        },
        {
          name: 'asker',
          model: { provider: 'scripted', turns: [call('ask_user_text', { question: 'Anyone there?' }), call('write_file', { path: 'x', content: 'y' }), finish] },
          tools: ['ask_user_text', 'write_file', 'finish'],
          limits: { max_iterations: 10 },
        },
        {
          name: 'boss',
          model: {
            provider: 'scripted',
            turns: [call('delegate', { agent: 'helper', task: 'Find the budget' }), call('ask_user_text', { question: 'The helper said: {{last_answer}}' }), finish],
          },
          tools: ['delegate', 'ask_user_text', 'finish'],
          delegates: ['helper'],
          limits: { max_iterations: 10, interaction_timeout_secs: 0 },
        },
        {
          name: 'helper',
          model: { provider: 'scripted', turns: [call('ask_user_text', { question: 'What budget?' }), call('needs_input', { missing: 'the budget in euros' })] },
          tools: ['ask_user_text', 'finish'],
          limits: { max_iterations: 5 },
        },
        {
          name: 'manager',
          model: { provider: 'scripted', turns: [call('delegate', { agent: 'waiter', task: 'Wait for sign-off' }), finish] },
          tools: ['delegate', 'finish'],
          delegates: ['waiter'],
          limits: { max_iterations: 5, interaction_timeout_secs: 0 },
        },
        {
          name: 'waiter',
          model: { provider: 'scripted', turns: [call('finish', { summary: 'signed off' })] },
          tools: ['finish'],
          stages: [
            {
              name: 'sign',
              mode: 'interactive_points',
              points: [{ name: 'signoff', prompt: 'Sign off?', options: ['Yes'], unattended: 'ask' }],
            },
          ],
          limits: { max_iterations: 5, interaction_timeout_secs: 0 },
        },
      ]),
    });
  });

  afterEach(() => fake.reset());

  afterAll(async () => {
    await stack.close();
    await fake.close();
  });

  const log = (runId: string) => stack.log(runId);
  const message = (runId: string, text: string) => stack.http('POST', `/v1/runs/${runId}/messages`, { text });

  describe('messages', () => {
    it('a message to a parked run is kept, does not answer the question, and joins the conversation before the next model call', async () => {
      const runId = await stack.startRun('talker');
      const question = await stack.waitForQuestion(runId);
      const sent = await message(runId, 'Make it blue, please');
      expect(sent).toMatchObject({ status: 202, body: { messageId: expect.any(String), pending: 1 } });
      expect((await stack.run(runId)).run.status).toBe('waiting');
      expect((await stack.http('GET', `/v1/interactions/${question.id}`)).body.interaction.status).toBe('open');

      expect((await stack.answer(question.id, { text: 'green' })).status).toBe(200);
      await stack.waitForStatus(runId, 'finished');
      const entries = await log(runId);
      const types = entries.map((e) => e.type);
      // answer → the person's message → the model's next turn.
      expect(types.slice(types.indexOf('answer'))).toEqual(['answer', 'user_message', 'assistant', 'tool_result', 'assistant', 'tool_result']);
      expect(entries.find((e) => e.type === 'user_message')).toMatchObject({ text: 'Make it blue, please', by: { subject: 'alice' } });
      const events = (await stack.http('GET', `/v1/runs/${runId}/events`)).body.events as any[];
      expect(events.filter((e) => e.type === 'message.received' || e.type === 'message.injected').map((e) => e.type)).toEqual(['message.received', 'message.injected']);
    });

    it('a step takes messages only when some may wait: not before the first model call of a step whose lease found none', async () => {
      // A spy on the worker's own store (real Redis underneath) counts the take-messages steps of this run.
      const take = jest.spyOn(stack.worker!.get(ParleyStore, { strict: false }).messages, 'take');
      try {
        const runId = await stack.startRun('talker');
        const question = await stack.waitForQuestion(runId);
        expect((await stack.answer(question.id, { text: 'green' })).status).toBe(200);
        await stack.waitForStatus(runId, 'finished');
        // ask (first step) and list_files (after the answer) follow a lease step: no take; finish follows list_files' result: one.
        expect(take.mock.calls.filter(([lease]) => lease.runId === runId)).toHaveLength(1);
      } finally {
        take.mockRestore();
      }
    });

    it('a stage that does not accept messages holds them until the next stage', async () => {
      const runId = await stack.startRun('focused');
      const question = await stack.waitForQuestion(runId);
      expect((await message(runId, 'also polish the edges')).status).toBe(202);
      expect((await stack.answer(question.id, { text: 'go' })).status).toBe(200);
      await stack.waitForStatus(runId, 'finished');
      const types = (await log(runId)).map((e) => (e.type === 'stage' ? `stage:${e.to}` : e.type));
      expect(types.indexOf('user_message')).toBeGreaterThan(types.indexOf('stage:polish'));
      expect(types.filter((t) => t === 'user_message')).toHaveLength(1);
    });

    it('messages a run never read are discarded when it ends or is stopped, and said so first', async () => {
      const eventsOf = async (runId: string) => (await stack.http('GET', `/v1/runs/${runId}/events`)).body.events as any[];
      const tail = (events: any[]) => events.slice(events.findIndex((e) => e.type === 'message.discarded')).map((e) => (e.type === 'run.status' ? `status:${e.data.status}` : e.type));

      // Finished by the model while its only stage held the message back.
      const finished = await stack.startRun('quiet');
      const question = await stack.waitForQuestion(finished);
      const held = (await message(finished, 'one more thing')).body.messageId as string;
      expect((await stack.answer(question.id, { text: 'yes' })).status).toBe(200);
      await stack.waitForStatus(finished, 'finished');
      const afterFinish = await eventsOf(finished);
      expect(afterFinish.find((e) => e.type === 'message.discarded').data).toEqual({ messageIds: [held] });
      expect(tail(afterFinish)).toEqual(['message.discarded', 'status:finished', 'run.finished']);

      // Stopped while parked, with two messages waiting.
      const stopped = await stack.startRun('talker');
      await stack.waitForQuestion(stopped);
      const first = (await message(stopped, 'first')).body.messageId as string;
      const second = (await message(stopped, 'second')).body.messageId as string;
      expect((await stack.http('POST', `/v1/runs/${stopped}/stop`)).status).toBe(200);
      const afterStop = await eventsOf(stopped);
      expect(afterStop.find((e) => e.type === 'message.discarded').data).toEqual({ messageIds: [first, second] });
      expect(tail(afterStop)).toEqual(['message.discarded', 'interaction.resolved', 'status:cancelled', 'run.cancelled']);

      for (const runId of [finished, stopped]) {
        expect((await log(runId)).filter((e) => e.type === 'user_message')).toHaveLength(0);
        expect(await stack.redis.exists(new RedisKeys(stack.config.prefix).runMessages('acme', runId))).toBe(0);
      }
    });

    it('a message to an ended run is refused, and to an unknown run is 404; a bad body changes nothing', async () => {
      const runId = await stack.startRun('sleeper');
      await stack.http('POST', `/v1/runs/${runId}/stop`);
      await stack.waitForStatus(runId, 'cancelled');
      const refused = await message(runId, 'too late');
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toContain('no run accepted the message');
      expect((await message('no-such-run', 'hello')).status).toBe(404);
      expect((await stack.http('POST', `/v1/runs/${runId}/messages`, { text: '' })).status).toBe(400);
    });

    it('works over socket.io too', async () => {
      const runId = await stack.startRun('talker');
      await stack.waitForQuestion(runId);
      const client = await stack.connect();
      try {
        expect(await client.socket.timeout(10_000).emitWithAck('message', { runId, text: 'over the socket' })).toMatchObject({ ok: true, pending: 1 });
        expect(await client.socket.timeout(10_000).emitWithAck('stop', { runId })).toMatchObject({ ok: true, run: { status: 'cancelled' } });
      } finally {
        client.close();
      }
    });
  });

  describe('stop', () => {
    it('stops a running run at its next step; the final status says who stopped it', async () => {
      const runId = await stack.startRun('sleeper');
      await waitFor(async () => (await log(runId)).some((e) => e.type === 'assistant'), { message: 'the first tool call' });
      const stopped = await stack.http('POST', `/v1/runs/${runId}/stop`, undefined, stack.token({ sub: 'ada', role: 'admin' }));
      expect(stopped.status).toBe(200);
      // Asked again while it still runs: nothing more is said.
      const again = await stack.http('POST', `/v1/runs/${runId}/stop`, undefined, stack.token({ sub: 'bob', role: 'admin' }));
      expect([200, 409]).toContain(again.status);
      const { run } = await stack.waitForStatus(runId, 'cancelled');
      expect(run.stoppedBy).toEqual({ kind: 'user', subject: 'ada', role: 'admin' });
      const entries = await log(runId);
      expect(entries.filter((e) => e.type === 'assistant')).toHaveLength(1);
      // The call that was running when the stop came ran to its end: its result is on the record.
      expect(entries.filter((e) => e.type === 'tool_result')).toEqual([expect.objectContaining({ name: 'shell', isError: false })]);
      // The flag was announced at once, before the end, and once.
      const events = (await stack.http('GET', `/v1/runs/${runId}/events`)).body.events as Array<{ type: string; data: any }>;
      const types = events.map((e) => e.type);
      expect(types.indexOf('tool.result')).toBeGreaterThan(types.indexOf('run.stop_requested'));
      expect(types.indexOf('tool.result')).toBeLessThan(types.indexOf('run.cancelled'));
      expect(events.filter((e) => e.type === 'run.stop_requested').map((e) => e.data)).toEqual([{ by: { kind: 'user', subject: 'ada', role: 'admin' } }]);
      expect(types.indexOf('run.stop_requested')).toBeLessThan(types.indexOf('run.cancelled'));
    });

    it('a stop during the first call of a turn records its result, and the turn\'s next call never starts', async () => {
      const runId = await stack.startRun('pair');
      await waitFor(async () => (await log(runId)).some((e) => e.type === 'assistant'), { message: 'the turn of two calls' });
      expect((await stack.http('POST', `/v1/runs/${runId}/stop`, undefined, stack.token({ sub: 'ada', role: 'admin' }))).status).toBe(200);
      await stack.waitForStatus(runId, 'cancelled');
      const entries = await log(runId);
      const [turn] = entries.filter((e): e is Extract<LogEntry, { type: 'assistant' }> => e.type === 'assistant');
      expect(turn.toolCalls).toHaveLength(2);
      expect(entries.filter((e) => e.type === 'tool_result')).toEqual([expect.objectContaining({ toolUseId: turn.toolCalls[0].toolUseId, isError: false })]);
    });

    it('stops a parked run at once and cancels its open question; racing an answer, exactly one wins', async () => {
      const parked = await stack.startRun('talker');
      const question = await stack.waitForQuestion(parked);
      expect((await stack.http('POST', `/v1/runs/${parked}/stop`)).body.run).toMatchObject({ status: 'cancelled', stoppedBy: { subject: 'alice' } });
      expect((await stack.http('GET', `/v1/interactions/${question.id}`)).body.interaction.status).toBe('cancelled');

      for (let i = 0; i < 3; i++) {
        const runId = await stack.startRun('talker');
        const asked = await stack.waitForQuestion(runId);
        const [answer, stop] = await Promise.all([stack.answer(asked.id, { text: 'now' }), stack.http('POST', `/v1/runs/${runId}/stop`)]);
        expect(stop.status).toBe(200);
        const { run } = await stack.waitForStatus(runId, 'cancelled');
        expect(run.status).toBe('cancelled');
        const answers = (await log(runId)).filter((e) => e.type === 'answer');
        expect(answers).toHaveLength(1);
        expect(answers[0].outcome).toBe(answer.status === 200 ? 'answered' : 'cancelled');
      }
    });

    it('two stops at once: one stops the run, the other is told it had already ended (409), however they interleave', async () => {
      for (let i = 0; i < 5; i++) {
        const runId = await stack.startRun('talker');
        await stack.waitForQuestion(runId);
        const stops = await Promise.all([stack.http('POST', `/v1/runs/${runId}/stop`), stack.http('POST', `/v1/runs/${runId}/stop`)]);
        expect(stops.map((stop) => stop.status).sort()).toEqual([200, 409]);
        const refused = stops.find((stop) => stop.status === 409)!;
        expect(refused.body.error).toMatchObject({ code: 'conflict', message: expect.stringContaining('already ended'), details: { status: 'cancelled' } });
      }
    });
  });

  describe('unattended runs', () => {
    it('never offers the human tools (except what the stage requires), survives a restart, and refuses a human tool called anyway', async () => {
      fake.setResponder([
        { toolCalls: [{ name: 'ask_user_text', input: { question: 'Anyone?' } }] },
        { toolCalls: [{ name: 'write_file', input: { path: 'a.txt', content: 'x' } }] },
        { toolCalls: [{ name: 'finish', input: { summary: 'done alone' } }] },
      ]);
      const started = await stack.http('POST', '/v1/runs', { agent: 'claude', task: 'Work alone', unattended: true });
      expect(started.body.run).toMatchObject({ unattended: true, trigger: 'api' });
      const runId = started.body.run.id as string;
      await stack.waitForStatus(runId, 'finished');
      const offered = fake.requests.map((r) => (r.tools ?? []).map((t) => t.name).sort());
      for (const tools of offered) {
        expect(tools).toEqual(['ask_user_confirm', 'finish', 'write_file']);
      }
      expect(systemText(fake.requests[0])).toContain('Nobody is watching');
      const results = (await log(runId)).filter((e) => e.type === 'tool_result');
      expect(JSON.parse(results[0].content).error).toContain('unknown tool: ask_user_text');
      // write_file asks by default: in an unattended run the agent's policy (deny) decides without parking.
      expect(JSON.parse(results[1].content).error).toContain('denied by policy');
      const audit = (await stack.http('GET', `/v1/runs/${runId}/audit`)).body.entries;
      expect(audit).toEqual([expect.objectContaining({ basis: 'policy', decision: 'deny' })]);

      await stack.stopAll();
      await stack.startAll();
      expect((await stack.run(runId)).run.unattended).toBe(true);
    });

    it('a webhook trigger is always unattended', async () => {
      fake.setResponder([{ toolCalls: [{ name: 'finish', input: { summary: 'hooked' } }] }]);
      const started = await stack.http('POST', '/v1/runs', { agent: 'claude', task: 'From a webhook', trigger: 'webhook' });
      expect(started.body.run).toMatchObject({ unattended: true, trigger: 'webhook' });
      await stack.waitForStatus(started.body.run.id, 'finished');
      expect(fake.requests[0].tools?.map((t) => t.name)).not.toContain('ask_user_text');
    });
  });

  describe('sub-agents', () => {
    it('the parent waits for its child; a child never asks, its needs_input reaches the parent, which asks the person', async () => {
      const runId = await stack.startRun('boss');
      const question = await stack.waitForQuestion(runId);
      expect(question.prompt.prompt).toContain('the budget in euros');
      const entries = await log(runId);
      const child = entries.find((e) => e.type === 'child');
      expect(child).toMatchObject({ agent: 'helper' });
      expect(entries.find((e) => e.type === 'child_result')).toMatchObject({ childRunId: child.childRunId, reason: 'needs_input', text: 'the budget in euros' });

      const childRun = (await stack.run(child.childRunId)).run;
      expect(childRun).toMatchObject({ trigger: 'delegate', unattended: true, parentRunId: runId, status: 'finished', endReason: 'needs_input' });
      const childResults = (await log(child.childRunId)).filter((e) => e.type === 'tool_result');
      expect(JSON.parse(childResults[0].content).error).toContain('unknown tool: ask_user_text');

      expect((await stack.answer(question.id, { text: '5000' })).status).toBe(200);
      await stack.waitForStatus(runId, 'finished');
      const events = (await stack.http('GET', `/v1/runs/${runId}/events`)).body.events as any[];
      expect(events.find((e) => e.type === 'child.ended')?.data).toEqual({ childRunId: child.childRunId, status: 'finished', reason: 'needs_input' });
    });

    it('a parent parks while its child waits; stopping the parent stops the child', async () => {
      const runId = await stack.startRun('manager');
      const parent = await waitFor(
        async () => {
          const body = await stack.run(runId);
          return body.run.status === 'waiting' && body.run.waitReason === 'child' ? body.run : undefined;
        },
        { message: 'the parent to wait on its child' },
      );
      const childRunId = parent.pendingInteractionId as string;
      const childWaiting = await stack.waitForQuestion(childRunId);
      expect(childWaiting.waitReason).toBe('checkpoint');

      expect((await stack.http('POST', `/v1/runs/${runId}/stop`)).status).toBe(200);
      await stack.waitForStatus(runId, 'cancelled');
      const { run } = await stack.waitForStatus(childRunId, 'cancelled');
      expect(run.stoppedBy).toMatchObject({ subject: 'alice' });
    });
  });
});
