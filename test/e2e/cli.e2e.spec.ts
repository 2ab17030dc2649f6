import { ApiClient } from '../../apps/cli/src/api/api.client';
import { CliSession } from '../../apps/cli/src/testing/cli.harness';
import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

describe('the parley CLI against the real gateway', () => {
  let stack: TestStack;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    const demo = (await import('node:fs')).readFileSync(`${__dirname}/../../agents/demo.yaml`, 'utf8');
    const dir = writeAgents([askerAgent()]);
    (await import('node:fs')).writeFileSync(`${dir}/demo.yaml`, demo);
    stack = await TestStack.start({ agentsDir: dir });
    env = { PARLEY_URL: stack.url, PARLEY_TOKEN: stack.token() };
  });

  afterAll(() => stack.close());

  const seen = (session: CliSession, text: string, from = 0) =>
    waitFor(() => (session.out + session.err).indexOf(text, from) >= 0, { message: `CLI output to show ${JSON.stringify(text)}` });

  it('run: follows the demo, prompts for each question and the approval in the terminal and exits 0 with the summary', async () => {
    const cli = new CliSession(['run', 'demo', 'Plan a team offsite'], env);
    await seen(cli, 'choice> ');
    cli.type('1');
    await seen(cli, 'Anything I should keep in mind for the Retreat');
    await seen(cli, '> ', (cli.out + cli.err).indexOf('Anything I should keep in mind'));
    cli.type('Lisbon, in May');
    await seen(cli, 'o/s/r/e/d> ');
    cli.type('o');
    await seen(cli, 'approve? y/n> ');
    cli.type('y');
    await seen(cli, 'feedback (optional)> ');
    cli.type('');
    expect(await cli.exit).toBe(0);
    expect(cli.out).toContain('plan.md');
  });

  it('run --detach --json, respond --json, respond <id> "text", ps --json', async () => {
    const detached = new CliSession(['run', 'asker', 'Ask me', '--detach', '--json'], env);
    expect(await detached.exit).toBe(0);
    const { runId } = JSON.parse(detached.out) as { runId: string };
    await stack.waitForQuestion(runId, 20_000);

    const listing = new CliSession(['respond', '--json'], env);
    expect(await listing.exit).toBe(0);
    const open = JSON.parse(listing.out) as Array<{ id: string; runId: string; kind: string; prompt: string }>;
    const question = open.find((i) => i.runId === runId);
    expect(question).toMatchObject({ kind: 'free_text', prompt: 'What now?' });

    const answer = new CliSession(['respond', question!.id, 'from the CLI', '--json'], env);
    expect(await answer.exit).toBe(0);
    const { run } = await stack.waitForStatus(runId, 'finished');
    expect(run.summary).toBe('got: from the CLI');

    const again = new CliSession(['respond', question!.id, 'twice'], env);
    expect(await again.exit).toBe(1);
    expect(again.err).toContain('already answered');

    const ps = new CliSession(['ps', '--json'], env);
    expect(await ps.exit).toBe(0);
    expect(JSON.stringify(JSON.parse(ps.out))).toContain(runId);
  });

  it("its client repeats a start, a message and an answer whose reply was lost, and each is done once", async () => {
    // Each first POST reaches the gateway and is done; its reply is lost on the way back.
    const lost = new Set<string>();
    const dropping = (async (url: string, init: RequestInit) => {
      const response = await fetch(url, init);
      const call = `${init.method} ${new URL(url).pathname}`;
      if (init.method === 'POST' && !lost.has(call)) {
        lost.add(call);
        throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
      }
      return response;
    }) as typeof fetch;
    const api = new ApiClient(stack.url, stack.token(), dropping, [0, 0]);

    const run = await api.startRun('asker', 'lost replies');
    expect((await stack.http('GET', '/v1/runs?limit=100')).body.runs.filter((r: { task: string }) => r.task === 'lost replies')).toHaveLength(1);
    const question = await stack.waitForQuestion(run.id);

    await api.sendMessage(run.id, 'one message');
    const events = (await stack.http('GET', `/v1/runs/${run.id}/events`)).body.events as Array<{ type: string }>;
    expect(events.filter((event) => event.type === 'message.received')).toHaveLength(1);

    await expect(api.answer(question.id, { text: 'answered once' })).resolves.toMatchObject({ id: question.id, status: 'answered' });
    const log = (await stack.http('GET', `/v1/runs/${run.id}/log`)).body.entries as Array<{ type: string }>;
    expect(log.filter((entry) => entry.type === 'answer')).toHaveLength(1);
    expect(lost.size).toBe(3);
  });
});
