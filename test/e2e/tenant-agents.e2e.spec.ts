import { stringify } from 'yaml';
import { digestDefinition } from '@parley/agents';
import { AgentDefinitionSchema } from '@parley/contracts';
import { AgentRepository, StoreContext } from '@parley/store';
import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

type Call = { name: string; input: Record<string, unknown> };
const turn = (...calls: Call[]) => ({ tool_calls: calls });
const finish = (summary: string) => turn({ name: 'finish', input: { summary } });

/** A tenant agent that asks one question, then finishes with `label` and the answer. */
function asking(name: string, label: string) {
  return {
    name,
    model: { provider: 'scripted', turns: [turn({ name: 'ask_user_text', input: { question: 'Which?' } }), finish(`${label}: {{last_answer}}`)] },
    tools: ['ask_user_text', 'finish'],
    limits: { max_iterations: 5, interaction_timeout_secs: 0 },
  };
}

/** A tenant agent that writes a file, allowed by its own definition. */
function writer(extra: Record<string, unknown> = {}) {
  return {
    name: 'writer',
    model: { provider: 'scripted', turns: [turn({ name: 'write_file', input: { path: 'a.txt', content: 'x' } }), finish('wrote')] },
    tools: ['write_file', 'finish'],
    permissions: { write_file: 'allow' },
    limits: { max_iterations: 5, interaction_timeout_secs: 0 },
    ...extra,
  };
}

describe('tenant agents', () => {
  let stack: TestStack;
  const admin = () => stack.token({ tenant: 'acme', sub: 'ada', role: 'admin' });
  const member = () => stack.token({ tenant: 'acme', sub: 'mo', role: 'member' });
  const operator = () => stack.token({ tenant: 'platform', sub: 'ops', role: 'operator' });
  const otherAdmin = () => stack.token({ tenant: 'globex', sub: 'gus', role: 'admin' });
  const upload = (definition: Record<string, unknown> & { name: string }, token = admin()) => stack.http('PUT', `/v1/agents/${definition.name}`, { definition }, token);
  const powersPath = (name: string, tenant = 'acme') => `/v1/operator/tenants/${tenant}/agents/${name}/powers`;

  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent('asker')]) });
  });

  afterAll(() => stack.close());

  /** Waits for the run to end and returns it with its log. */
  async function ended(runId: string, token = admin()): Promise<{ run: any; log: any[] }> {
    const run = await waitFor(
      async () => {
        const body = (await stack.http('GET', `/v1/runs/${runId}`, undefined, token)).body;
        return ['finished', 'failed', 'cancelled'].includes(body.run?.status) ? body.run : undefined;
      },
      { timeoutMs: 20_000, message: `run ${runId} to end` },
    );
    return { run, log: (await stack.http('GET', `/v1/runs/${runId}/log`, undefined, token)).body.entries };
  }

  it('refuses a bad definition naming the field, and stores nothing', async () => {
    const bad = await upload({ ...asking('broken', 'x'), permissions: { teleport: 'allow' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues).toEqual([{ field: 'definition.permissions.teleport', reason: expect.stringContaining('unknown tool') }]);
    const yaml = await stack.http('PUT', '/v1/agents/broken', { yaml: 'name: broken\nmodel: [' }, admin());
    expect(yaml.status).toBe(400);
    expect(yaml.body.error.details.issues[0].field).toBe('yaml');
    const both = await stack.http('PUT', '/v1/agents/broken', { yaml: 'x: 1', definition: {} }, admin());
    expect(both.status).toBe(400);
    const clash = await upload(asking('asker', 'mine'));
    expect(clash.status).toBe(409);
    expect(clash.body.error.details.issues[0].field).toBe('definition.name');
    expect((await stack.http('GET', '/v1/agents/broken', undefined, admin())).status).toBe(404);
    const names = (await stack.http('GET', '/v1/agents', undefined, admin())).body.agents.map((a: any) => a.name);
    expect(names).toEqual(['asker']);
  });

  it('lets admins upload (YAML or JSON) and members list and read, but not upload or delete', async () => {
    const created = await stack.http('PUT', '/v1/agents/helper', { yaml: stringify(asking('helper', 'v1')) }, admin());
    expect(created.status).toBe(201);
    expect(created.body.agent).toMatchObject({ name: 'helper', source: 'tenant', digest: expect.stringMatching(/^[0-9a-f]{64}$/), inertPowers: [], powersEnabled: false, uploadedBy: 'ada' });
    const again = await upload(asking('helper', 'v1'));
    expect(again.status).toBe(200);
    expect(again.body.agent.digest).toBe(created.body.agent.digest);

    const refused = await upload(asking('sneaky', 'x'), member());
    expect(refused.status).toBe(403);
    // The role is checked first: a member's malformed upload is refused as a member's, not read.
    expect((await stack.http('PUT', '/v1/agents/sneaky', { nonsense: true }, member())).status).toBe(403);
    expect((await stack.http('GET', '/v1/agents/sneaky', undefined, admin())).status).toBe(404);
    expect((await stack.http('DELETE', '/v1/agents/helper', undefined, member())).status).toBe(403);

    const listed = (await stack.http('GET', '/v1/agents', undefined, member())).body.agents;
    expect(listed.map((a: any) => [a.name, a.source])).toEqual([
      ['asker', 'global'],
      ['helper', 'tenant'],
    ]);
    const one = await stack.http('GET', '/v1/agents/helper', undefined, member());
    expect(one.body.agent.definition.model.turns).toHaveLength(2);
    expect((await stack.http('GET', '/v1/agents/asker', undefined, member())).body.agent).toEqual(expect.objectContaining({ name: 'asker', source: 'global' }));
  });

  it('does not list an agent of a provider this deployment does not run (uploaded through a gateway with an API key), and refuses its start naming why', async () => {
    // As a gateway with ANTHROPIC_API_KEY would have stored it; this deployment has none.
    const definition = AgentDefinitionSchema.parse({ name: 'claude-helper', model: { provider: 'anthropic', name: 'claude-sonnet-5-5' }, tools: ['ask_user_text', 'finish'] });
    const { canonical, digest, sizeBytes } = digestDefinition(definition);
    const agents = new AgentRepository(new StoreContext(stack.redis, { prefix: stack.config.prefix, eventsMaxLen: 1000, retentionSecs: 60, leaseMs: 1000 }));
    await agents.save('acme', { name: 'claude-helper', digest, uploadedAt: new Date().toISOString(), uploadedBy: 'ada', sizeBytes }, canonical, 50);

    const listed = (await stack.http('GET', '/v1/agents', undefined, member())).body.agents as Array<{ name: string }>;
    expect(listed.map((agent) => agent.name)).toContain('helper');
    expect(listed.map((agent) => agent.name)).not.toContain('claude-helper');
    expect((await stack.http('GET', '/v1/agents/claude-helper', undefined, member())).status).toBe(200);
    const refused = await stack.http('POST', '/v1/runs', { agent: 'claude-helper', task: 'x' }, member());
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('ANTHROPIC_API_KEY');
    expect((await stack.http('DELETE', '/v1/agents/claude-helper', undefined, admin())).status).toBe(200);
  });

  it('runs a tenant agent: it parks on its question and finishes with the answer', async () => {
    const runId = await stack.startRun('helper', 'pick one', member());
    const question = await stack.waitForQuestion(runId, 20_000, member());
    expect((await stack.answer(question.id, { text: 'blue' }, member())).status).toBe(200);
    const { run } = await ended(runId, member());
    expect(run).toMatchObject({ status: 'finished', summary: 'v1: blue', agent: 'helper', agentSource: 'tenant', agentDigest: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('keeps allow on a tool with effects inert (it asks) until an operator enables that version, and again after a wider re-upload', async () => {
    const first = await upload(writer());
    expect(first.body.agent.inertPowers).toEqual([{ field: 'permissions.write_file', kind: 'allow', value: 'write_file', reason: 'needs operator enablement' }]);
    const digest = first.body.agent.digest;

    const asked = await stack.startRun('writer', 'write', admin());
    const approval = await stack.waitForQuestion(asked, 20_000, admin());
    expect(approval.prompt).toMatchObject({ kind: 'tool_approval', tool: 'write_file' });
    expect((await stack.answer(approval.id, { decision: 'allow_once' }, admin())).status).toBe(200);
    expect((await ended(asked)).run.status).toBe('finished');

    // An admin cannot enable its own tenant's powers; an operator can, for exactly the reviewed version.
    expect((await stack.http('PUT', powersPath('writer'), { digest }, admin())).status).toBe(403);
    const review = await stack.http('GET', powersPath('writer'), undefined, operator());
    expect(review.body.powers).toMatchObject({ tenant: 'acme', agent: 'writer', digest, enabled: false, gatedPowers: [expect.objectContaining({ field: 'permissions.write_file' })] });
    expect(review.body.powers.definition.permissions).toEqual({ write_file: 'allow' });
    const enabled = await stack.http('PUT', powersPath('writer'), { digest }, operator());
    expect(enabled.status).toBe(200);
    expect(enabled.body.powers).toMatchObject({ enabled: true, enabledVersions: [expect.objectContaining({ digest, current: true, enabledBy: 'ops' })] });
    expect((await stack.http('GET', '/v1/agents/writer', undefined, admin())).body.agent).toMatchObject({ powersEnabled: true, inertPowers: [] });

    const free = await stack.startRun('writer', 'write', admin());
    const { run, log } = await ended(free);
    expect(run.status).toBe('finished');
    expect(log.filter((entry) => entry.type === 'question')).toEqual([]);

    // Identical content keeps the enablement; a wider version is inert again.
    expect((await upload(writer())).body.agent).toMatchObject({ digest, powersEnabled: true });
    const wider = await upload(writer({ tools: ['write_file', 'delete_file', 'finish'], permissions: { write_file: 'allow', delete_file: 'allow' } }));
    expect(wider.status).toBe(200);
    expect(wider.body.agent.digest).not.toBe(digest);
    expect(wider.body.agent).toMatchObject({ powersEnabled: false });
    expect(wider.body.agent.inertPowers.map((p: any) => p.field).sort()).toEqual(['permissions.delete_file', 'permissions.write_file']);
    const stale = await stack.http('PUT', powersPath('writer'), { digest }, operator());
    expect(stale.status).toBe(409);
    expect(stale.body.error.details.issues[0].field).toBe('digest');
    const askedAgain = await stack.startRun('writer', 'write', admin());
    expect((await stack.waitForQuestion(askedAgain, 20_000, admin())).prompt.tool).toBe('write_file');
    await stack.http('POST', `/v1/runs/${askedAgain}/stop`, undefined, admin());
  });

  it('has no shell (nor its safe commands) until enabled, and the safe-commands route says which are in effect', async () => {
    const shellAgent = {
      name: 'toucher',
      model: { provider: 'scripted', turns: [turn({ name: 'shell', input: { command: 'touch safe.txt' } }), finish('touched')] },
      tools: ['shell', 'finish'],
      safe_commands: ['touch'],
      limits: { max_iterations: 5, interaction_timeout_secs: 0 },
    };
    const uploaded = await upload(shellAgent);
    expect(uploaded.body.agent.inertPowers).toEqual([
      { field: 'tools.0', kind: 'tool', value: 'shell', reason: 'needs operator enablement' },
      { field: 'safe_commands.0', kind: 'safe_command', value: 'touch', reason: 'needs operator enablement' },
    ]);
    const entries = async () =>
      (await stack.http('GET', '/v1/approvals/safe-commands?agent=toucher', undefined, member())).body.safeCommands.filter((c: any) => c.entry === 'touch');
    expect(await entries()).toEqual([]);

    /** Not enabled: shell is not offered, a call gets the unknown-tool result, and nobody is asked. */
    const refusedShell = async (): Promise<void> => {
      const runId = await stack.startRun('toucher', 'touch', admin());
      const { run, log } = await ended(runId);
      expect(run.status).toBe('finished');
      expect(log.filter((entry) => entry.type === 'question')).toEqual([]);
      expect(JSON.stringify(log.find((entry) => entry.type === 'tool_result' && entry.name === 'shell'))).toContain('unknown tool: shell is not available to this agent');
    };
    await refusedShell();

    expect((await stack.http('PUT', powersPath('toucher'), { digest: uploaded.body.agent.digest }, operator())).status).toBe(200);
    expect(await entries()).toEqual([{ entry: 'touch', source: 'agent:toucher' }]);
    const free = await stack.startRun('toucher', 'touch', admin());
    const { run, log } = await ended(free);
    expect(run.status).toBe('finished');
    expect(log.find((entry) => entry.type === 'tool_result' && entry.name === 'shell').approval).toMatchObject({ basis: 'safe_command', covered: ['touch'] });

    // Revoked: inert again from the next run step.
    expect((await stack.http('DELETE', powersPath('toucher'), undefined, operator())).body).toMatchObject({ revoked: 1, powers: { enabled: false } });
    expect(await entries()).toEqual([]);
    await refusedShell();
  });

  it('has no http_request and no hosts until enabled, even though every call would ask', async () => {
    const fetcher = {
      name: 'fetcher',
      model: { provider: 'scripted', turns: [turn({ name: 'http_request', input: { method: 'GET', url: 'http://169.254.169.254/latest/meta-data/' } }), finish('fetched')] },
      tools: ['http_request', 'finish'],
      http: { allowed_hosts: ['169.254.169.254'] },
      limits: { max_iterations: 5, interaction_timeout_secs: 0 },
    };
    const uploaded = await upload(fetcher);
    expect(uploaded.body.agent.inertPowers).toEqual([
      { field: 'tools.0', kind: 'tool', value: 'http_request', reason: 'needs operator enablement' },
      { field: 'http.allowed_hosts.0', kind: 'allowed_host', value: '169.254.169.254', reason: 'needs operator enablement' },
    ]);
    const { run, log } = await ended(await stack.startRun('fetcher', 'fetch', admin()));
    expect(run.status).toBe('finished');
    expect(log.filter((entry) => entry.type === 'question')).toEqual([]);
    expect(JSON.stringify(log.find((entry) => entry.type === 'tool_result' && entry.name === 'http_request'))).toContain('unknown tool: http_request is not available to this agent');
  });

  it('a run keeps the version it started with across a re-upload, a deletion and a worker restart', async () => {
    const v1 = (await upload(asking('keeper', 'v1'))).body.agent.digest;
    const runId = await stack.startRun('keeper', 'keep', admin());
    const question = await stack.waitForQuestion(runId, 20_000, admin());

    const v2 = (await upload(asking('keeper', 'v2'))).body.agent.digest;
    expect(v2).not.toBe(v1);
    await stack.stopWorker();
    expect((await stack.http('DELETE', '/v1/agents/keeper', undefined, admin())).body).toEqual({ deleted: { name: 'keeper', digest: v2 } });
    expect((await stack.http('POST', '/v1/runs', { agent: 'keeper', task: 'x' }, admin())).status).toBe(404);
    await stack.startWorker();

    expect((await stack.answer(question.id, { text: 'kept' }, admin())).status).toBe(200);
    const { run } = await ended(runId);
    expect(run).toMatchObject({ status: 'finished', summary: 'v1: kept', agentDigest: v1 });

    // A superseded version goes with the last run that needed it.
    const stored = (digest: string) => stack.redis.exists(`${stack.config.prefix}:{t:acme}:agent:${digest}`, `${stack.config.prefix}:{t:acme}:agent:${digest}:runs`);
    expect([await stored(v1), await stored(v2)]).toEqual([0, 0]);
    expect(await stack.redis.zcard(`${stack.config.prefix}:{t:acme}:agents:superseded`)).toBe(0);
  });

  it('a superseded version stays while another of its runs has not ended, and goes with the last', async () => {
    const v1 = (await upload(asking('twice', 'v1'))).body.agent.digest;
    const [first, second] = [await stack.startRun('twice', 'one', admin()), await stack.startRun('twice', 'two', admin())];
    const q1 = await stack.waitForQuestion(first, 20_000, admin());
    await stack.waitForQuestion(second, 20_000, admin());
    await upload(asking('twice', 'v2'));
    const stored = () => stack.redis.exists(`${stack.config.prefix}:{t:acme}:agent:${v1}`);

    expect((await stack.answer(q1.id, { text: 'a' }, admin())).status).toBe(200);
    expect((await ended(first)).run).toMatchObject({ status: 'finished', summary: 'v1: a' });
    expect(await stored()).toBe(1);
    expect((await stack.http('POST', `/v1/runs/${second}/stop`, undefined, admin())).status).toBe(200);
    expect((await ended(second)).run.status).toBe('cancelled');
    expect(await stored()).toBe(0);
  });

  it('resumes a tenant agent run on a fresh worker after one dies mid-run', async () => {
    await upload(asking('survivor', 'alive'));
    const runId = await stack.startRun('survivor', 'survive', admin());
    const question = await stack.waitForQuestion(runId, 20_000, admin());
    await stack.stopWorker();
    expect((await stack.answer(question.id, { text: 'yes' }, admin())).status).toBe(200);
    expect((await stack.run(runId, admin())).run.status).toBe('queued');
    await stack.startWorker();
    expect((await ended(runId)).run).toMatchObject({ status: 'finished', summary: 'alive: yes' });
  });

  it('an operator token reads no tenant data, and only operator tokens reach the operator routes', async () => {
    const runId = await stack.startRun('helper', 'private', admin());
    for (const path of [`/v1/runs/${runId}`, '/v1/runs', '/v1/agents', '/v1/approvals', '/v1/interactions']) {
      const res = await stack.http('GET', path, undefined, operator());
      expect([path, res.status]).toEqual([path, 403]);
      expect(JSON.stringify(res.body)).not.toContain('private');
    }
    await expect(stack.connect(operator())).rejects.toThrow(/operator/);
    for (const token of [admin(), member(), stack.token({ tenant: 'acme', sub: 'svc', role: 'service' })]) {
      expect((await stack.http('GET', '/v1/operator/tenants/acme/agents', undefined, token)).status).toBe(403);
    }
    const listed = await stack.http('GET', '/v1/operator/tenants/acme/agents', undefined, operator());
    expect(listed.body.agents.map((a: any) => a.name)).toContain('helper');
    expect((await stack.http('GET', powersPath('nobody'), undefined, operator())).status).toBe(404);
    await stack.http('POST', `/v1/runs/${runId}/stop`, undefined, admin());
  });

  it("another tenant neither sees nor uses the agent: 404 exactly like a missing one", async () => {
    const pairs: Array<[string, string, unknown]> = [
      ['GET', '/v1/agents/:name', undefined],
      ['DELETE', '/v1/agents/:name', undefined],
      ['GET', '/v1/approvals/safe-commands?agent=:name', undefined],
      ['POST', '/v1/runs', { agent: ':name', task: 'steal' }],
    ];
    for (const [method, path, body] of pairs) {
      const call = (name: string) =>
        stack.http(method, path.replace(':name', name), body === undefined ? undefined : JSON.parse(JSON.stringify(body).replace(':name', name)), otherAdmin());
      const foreign = await call('helper');
      const missing = await call('nosuchagent');
      expect([path, foreign.status]).toEqual([path, 404]);
      expect(JSON.stringify(foreign.body).replaceAll('helper', 'X')).toBe(JSON.stringify(missing.body).replaceAll('nosuchagent', 'X'));
    }
    const listed = (await stack.http('GET', '/v1/agents', undefined, otherAdmin())).body.agents.map((a: any) => a.name);
    expect(listed).toEqual(['asker']);
    expect((await stack.http('GET', '/v1/operator/tenants/globex/agents', undefined, operator())).body.agents).toEqual([]);
    expect((await stack.http('GET', '/v1/agents/helper', undefined, admin())).status).toBe(200);
  });
});
