import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TestStack, writeAgents } from '../support/stack';

type Call = { name: string; input: Record<string, unknown> };
const turn = (...calls: Call[]) => ({ tool_calls: calls });
const shell = (command: string): Call => ({ name: 'shell', input: { command } });
const finish = { tool_calls: [{ name: 'finish', input: { summary: 'done: {{last_answer}}' } }] };

function scripted(name: string, turns: unknown[], extra: Record<string, unknown> = {}) {
  return {
    name,
    model: { provider: 'scripted', turns: [...turns, finish] },
    tools: ['shell', 'read_file', 'write_file', 'delete_file', 'finish'],
    limits: { max_iterations: 40, interaction_timeout_secs: 0 },
    ...extra,
  };
}

/** Canonical JSON (keys sorted) → SHA-256, computed independently of Parley's own helper. */
function digest(value: Record<string, unknown>): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sorted) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as any)[k])])) : v;
  return createHash('sha256').update(JSON.stringify(sorted(value))).digest('hex');
}

const BYPASSES = [
  'touch a; rm -rf d',
  'touch a && rm x',
  'touch a || rm x',
  'touch a | sh',
  'touch $(rm x)',
  'touch `rm x`',
  'touch a\nrm x',
  'touch a > out.txt',
  'bash -c "touch a"',
  'env X=1 touch a',
  'X=1 touch a',
  'touch a <<EOF\nx\nEOF',
];

describe('tool approvals', () => {
  let stack: TestStack;
  let server: Server;
  let hits: Array<{ method: string; url: string }>;
  let host: string;

  beforeAll(async () => {
    hits = [];
    server = createServer((req, res) => {
      hits.push({ method: req.method ?? '', url: req.url ?? '' });
      res.setHeader('content-type', 'text/plain');
      res.end(`hello ${req.method}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agents = writeAgents([
      scripted('granter', [
        turn(shell('touch a.txt && mkdir -p d')),
        turn(shell('touch b.txt')),
        turn(shell('touch c.txt; rm a.txt')),
        turn(shell('ls && cat a.txt')),
        turn(shell('touch x $(rm a.txt)')),
      ]),
      scripted('bypasser', [turn(shell('touch first')), ...BYPASSES.map((command) => turn(shell(command)))]),
      scripted(
        'precedence',
        [turn(shell('ls')), turn({ name: 'write_file', input: { path: 'w.txt', content: 'x' } }), turn({ name: 'read_file', input: { path: 'w.txt' } })],
        { permissions: { shell: 'deny', write_file: 'allow' }, safe_commands: ['ls'] },
      ),
      scripted('open', [turn(shell('touch anything && rm -f nothing'))], { permissions: { shell: 'allow' } }),
      scripted('agentsafe', [turn(shell('touch safe.txt')), turn(shell('touch safe.txt && rm safe.txt'))], { safe_commands: ['touch'] }),
      scripted('editor', [
        turn({ name: 'write_file', input: { path: 'notes/a.md', content: 'from the model' } }),
        turn({ name: 'write_file', input: { path: 'notes/b.md', content: 'second' } }),
        turn({ name: 'write_file', input: { path: 'other.md', content: 'third' } }),
      ]),
      scripted('slow', [turn({ name: 'write_file', input: { path: 'late.txt', content: 'x' } })], {
        limits: { max_iterations: 5, interaction_timeout_secs: 1 },
      }),
      scripted('stopper', [turn({ name: 'delete_file', input: { path: 'x' } })]),
      scripted('survivor', [
        turn(shell('touch one')),
        turn({ name: 'write_file', input: { path: 'w.txt', content: 'x' } }),
        turn(shell('touch two')),
      ]),
      {
        name: 'stager',
        model: {
          provider: 'scripted',
          turns: [
            turn({ name: 'write_file', input: { path: 'a.txt', content: '1' } }),
            turn({ name: 'write_file', input: { path: 'a.txt', content: '2' } }),
            turn({ name: 'complete_stage', input: { output: 'drafted', next: 'review' } }),
            turn({ name: 'write_file', input: { path: 'a.txt', content: '3' } }),
            turn({ name: 'complete_stage', input: { output: 'reviewed', next: 'draft' } }),
            turn({ name: 'write_file', input: { path: 'a.txt', content: '4' } }),
            turn({ name: 'complete_stage', input: { output: 'redrafted', next: 'review' } }),
            turn({ name: 'complete_stage', input: { output: 'done', next: 'done' } }),
            finish,
          ],
        },
        tools: ['write_file', 'finish'],
        stages: [
          { name: 'draft', transitions: ['review'] },
          { name: 'review', transitions: ['draft', 'done'] },
          { name: 'done' },
        ],
        limits: { max_iterations: 20, interaction_timeout_secs: 0 },
      },
      {
        ...scripted('fetcher', [
          turn({ name: 'http_request', input: { url: `http://${host}/one` } }),
          turn({ name: 'http_request', input: { url: `http://${host}/two` } }),
          turn({ name: 'http_request', input: { method: 'POST', url: `http://${host}/three`, body: 'hi' } }),
          turn({ name: 'http_request', input: { url: 'http://example.invalid/nope' } }),
        ]),
        tools: ['http_request', 'finish'],
        http: { allowed_hosts: [host], timeout_secs: 5 },
      },
    ]);
    stack = await TestStack.start({ agentsDir: agents });
  });

  afterAll(async () => {
    await stack.close();
    await new Promise((resolve) => server.close(resolve));
  });

  async function approval(runId: string, previous?: string): Promise<any> {
    const interaction = await stack.waitForQuestion(runId);
    if (interaction.id === previous) {
      return approval(runId, previous);
    }
    expect(interaction.waitReason).toBe('approval');
    return interaction;
  }

  const audit = async (runId: string) => (await stack.http('GET', `/v1/runs/${runId}/audit`)).body.entries as any[];
  const toolResults = async (runId: string) => (await stack.log(runId)).filter((e) => e.type === 'tool_result');
  const workspace = (runId: string) => stack.redis.hgetall(`${stack.config.prefix}:{t:acme}:run:${runId}:ws`);
  const grants = (runId: string) => stack.redis.smembers(`${stack.config.prefix}:{t:acme}:run:${runId}:grants`);

  it('a run grant is keyed on each command of the line; other commands still ask; lines that cannot be read give no grant', async () => {
    const runId = await stack.startRun('granter');
    const first = await approval(runId);
    expect(first.prompt).toMatchObject({
      kind: 'tool_approval',
      tool: 'shell',
      telling: { label: 'command', value: 'touch a.txt && mkdir -p d' },
      grant: { reusable: true, keys: ['shell:cmd:touch', 'shell:cmd:mkdir'], description: expect.stringContaining('touch') },
    });
    expect((await stack.answer(first.id, { decision: 'allow_run' })).status).toBe(200);

    // `touch b.txt` runs on the grant; `touch c.txt; rm a.txt` asks because rm was never granted.
    const second = await approval(runId, first.id);
    expect(second.prompt.telling.value).toBe('touch c.txt; rm a.txt');
    expect(second.prompt.grant.keys).toEqual(['shell:cmd:touch', 'shell:cmd:rm']);
    expect((await stack.answer(second.id, { decision: 'deny', reason: 'no deleting' })).status).toBe(200);

    // `ls && cat a.txt` runs as safe commands; the substitution line asks and cannot be granted for reuse.
    const third = await approval(runId, second.id);
    expect(third.prompt.grant).toEqual({ reusable: false, reason: expect.stringContaining('command substitution') });
    const refused = await stack.answer(third.id, { decision: 'allow_run' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.issues[0]).toMatchObject({ field: 'decision' });
    expect((await stack.answer(third.id, { decision: 'deny' })).status).toBe(200);
    await stack.waitForStatus(runId, 'finished');

    const results = await toolResults(runId);
    expect(results).toHaveLength(6);
    expect(JSON.parse(results[0].content)).toMatchObject({ ok: true, exitCode: 0 });
    expect(results[1].approval).toMatchObject({ basis: 'grant', covered: ['run|shell:cmd:touch'] });
    expect(JSON.parse(results[2].content).error).toContain('denied by the approver: no deleting');
    expect(results[3].approval).toMatchObject({ basis: 'safe_command' });
    expect(JSON.parse(results[3].content)).toMatchObject({ ok: true, stdout: expect.stringContaining('a.txt') });
    expect(Object.keys(await workspace(runId)).sort()).toEqual(['a.txt', 'b.txt']);

    const entries = await audit(runId);
    expect(entries.map((e) => [e.basis, e.decision, e.scope])).toEqual([
      ['person', 'allow_run', 'run'],
      ['grant', 'allow', null],
      ['person', 'deny', null],
      ['safe_command', 'allow', null],
      ['person', 'deny', null],
    ]);
    expect(entries[0]).toMatchObject({
      approver: { tenant: 'acme', kind: 'user', subject: 'alice', role: 'member' },
      grants: ['run|shell:cmd:touch', 'run|shell:cmd:mkdir'],
      argsDigest: digest({ command: 'touch a.txt && mkdir -p d' }),
    });
    expect(entries[2]).toMatchObject({ reason: 'no deleting' });
    // Grants end with the run.
    expect(await grants(runId)).toEqual([]);
  });

  it(`a granted program cannot be chained, piped, substituted or wrapped past the grant (${BYPASSES.length} attempts)`, async () => {
    const runId = await stack.startRun('bypasser');
    let previous = await approval(runId);
    expect((await stack.answer(previous.id, { decision: 'allow_run' })).status).toBe(200);
    for (const command of BYPASSES) {
      const next = await approval(runId, previous.id);
      expect(next.prompt.telling.value).toBe(command);
      expect((await stack.answer(next.id, { decision: 'deny' })).status).toBe(200);
      previous = next;
    }
    await stack.waitForStatus(runId, 'finished');
    const entries = await audit(runId);
    expect(entries).toHaveLength(1 + BYPASSES.length);
    expect(entries.filter((e) => e.basis !== 'person')).toEqual([]);
  });

  it('deny beats safe commands; allow runs without asking; read-only tools are allowed by default', async () => {
    const runId = await stack.startRun('precedence');
    const { run } = await stack.waitForStatus(runId, 'finished');
    expect(run.summary).toContain('done');
    const results = await toolResults(runId);
    expect(JSON.parse(results[0].content).error).toContain('unknown tool: shell');
    expect(results.slice(1).map((r) => [r.name, r.isError])).toEqual([
      ['write_file', false],
      ['read_file', false],
      ['finish', false],
    ]);
    expect(await audit(runId)).toEqual([]);

    const open = await stack.startRun('open');
    await stack.waitForStatus(open, 'finished');
    expect(JSON.parse((await toolResults(open))[0].content)).toMatchObject({ ok: true, exitCode: 0 });
  });

  it("an agent's safe commands allow any arguments but never a line that also runs something else", async () => {
    const runId = await stack.startRun('agentsafe');
    const asked = await approval(runId);
    expect(asked.prompt.telling.value).toBe('touch safe.txt && rm safe.txt');
    expect((await stack.answer(asked.id, { decision: 'deny' })).status).toBe(200);
    await stack.waitForStatus(runId, 'finished');
    expect((await audit(runId)).map((e) => e.basis)).toEqual(['safe_command', 'person']);

    const safe = await stack.http('GET', '/v1/approvals/safe-commands?agent=agentsafe');
    expect(safe.status).toBe(200);
    expect(safe.body.safeCommands).toEqual(expect.arrayContaining([{ entry: 'touch', source: 'agent:agentsafe' }, expect.objectContaining({ entry: 'ls', source: 'default' })]));
  });

  it('approve with edited arguments runs the edit, tells the model, and the digest matches; a folder grant covers the folder only', async () => {
    const runId = await stack.startRun('editor');
    const first = await approval(runId);
    expect(first.prompt).toMatchObject({ tool: 'write_file', telling: { label: 'path', value: 'notes/a.md' }, grant: { directories: ['', 'notes/'] } });
    const bad = await stack.answer(first.id, { decision: 'allow_once', input: { path: 5 } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.issues[0]).toMatchObject({ field: 'input.path' });
    const badFolder = await stack.answer(first.id, { decision: 'allow_run', directory: 'elsewhere' });
    expect(badFolder.status).toBe(422);
    const edited = { path: 'notes/a.md', content: 'edited by a person' };
    const ok = await stack.answer(first.id, { decision: 'allow_run', input: edited, directory: 'notes' });
    expect(ok.status).toBe(200);
    expect(ok.body.interaction.answer).toMatchObject({ edited: true, grants: ['run|write_file:dir:notes/'], argsDigest: digest(edited) });

    // notes/b.md runs on the folder grant; other.md is outside it and asks.
    const third = await approval(runId, first.id);
    expect(third.prompt.telling.value).toBe('other.md');
    expect((await stack.answer(third.id, { decision: 'allow_once' })).status).toBe(200);
    await stack.waitForStatus(runId, 'finished');

    const files = await workspace(runId);
    expect(files).toEqual({ 'notes/a.md': 'edited by a person', 'notes/b.md': 'second', 'other.md': 'third' });
    const results = await toolResults(runId);
    expect(JSON.parse(results[0].content)).toMatchObject({ ok: true, approver_edited: { arguments: edited } });
    const entries = await audit(runId);
    expect(entries[0]).toMatchObject({ decision: 'allow_run', edited: true, argsDigest: digest(edited) });
    expect(entries[1]).toMatchObject({ basis: 'grant', grants: ['run|write_file:dir:notes/'] });
    expect(entries[2]).toMatchObject({ decision: 'allow_once', scope: 'once', grants: [] });
  });

  it('a deadline on an approval denies the call: silence is never consent', async () => {
    const runId = await stack.startRun('slow');
    const asked = await approval(runId);
    const { run } = await stack.waitForStatus(runId, 'finished');
    expect(run.summary).toContain('nobody approved this call before its deadline');
    expect(await workspace(runId)).toEqual({});
    const [entry] = await audit(runId);
    expect(entry).toMatchObject({ interactionId: asked.id, basis: 'deadline', decision: 'deny', approver: { kind: 'deadline' } });
    expect(entry.argsDigest).toBe(digest({ path: 'late.txt', content: 'x' }));
  });

  it("stopping a run denies its open approval", async () => {
    const runId = await stack.startRun('stopper');
    const asked = await approval(runId);
    expect((await stack.http('POST', `/v1/runs/${runId}/cancel`)).status).toBe(200);
    const { interaction } = (await stack.http('GET', `/v1/interactions/${asked.id}`)).body;
    expect(interaction.status).toBe('cancelled');
    expect((await audit(runId))[0]).toMatchObject({ basis: 'cancelled', decision: 'deny' });
    const events = (await stack.http('GET', `/v1/runs/${runId}/events`)).body.events as any[];
    expect(events.find((e) => e.type === 'interaction.resolved').data).toMatchObject({ interactionId: asked.id, outcome: 'cancelled', decision: 'deny' });
    expect((await stack.answer(asked.id, { decision: 'allow_once' })).status).toBe(409);
    const approvals = (await stack.http('GET', '/v1/approvals', undefined, stack.token({ role: 'admin' }))).body.approvals as any[];
    expect(approvals.map((a) => a.id)).not.toContain(asked.id);
  });

  it('grants survive a restart of every service while the run is parked', async () => {
    const runId = await stack.startRun('survivor');
    const first = await approval(runId);
    expect((await stack.answer(first.id, { decision: 'allow_run' })).status).toBe(200);
    const second = await approval(runId, first.id);
    expect(second.prompt.tool).toBe('write_file');
    await stack.stopAll();
    await stack.startAll();
    expect((await stack.answer(second.id, { decision: 'allow_once' })).status).toBe(200);
    await stack.waitForStatus(runId, 'finished');
    expect((await audit(runId)).map((e) => e.basis)).toEqual(['person', 'person', 'grant']);
    expect(Object.keys(await workspace(runId)).sort()).toEqual(['one', 'two', 'w.txt']);
  });

  it('a stage grant applies while the run is in that stage, not in another, and again when it re-enters it', async () => {
    const runId = await stack.startRun('stager');
    const first = await approval(runId);
    expect(first.prompt).toMatchObject({ stage: 'draft', telling: { value: 'a.txt' } });
    expect((await stack.answer(first.id, { decision: 'allow_stage' })).body.interaction.answer.grants).toEqual(['stage|draft|write_file:path:a.txt']);
    const inReview = await approval(runId, first.id);
    expect(inReview.prompt.stage).toBe('review');
    expect((await stack.answer(inReview.id, { decision: 'deny' })).status).toBe(200);
    await stack.waitForStatus(runId, 'finished');
    expect((await audit(runId)).map((e) => [e.basis, e.decision])).toEqual([
      ['person', 'allow_stage'],
      ['grant', 'allow'],
      ['person', 'deny'],
      ['grant', 'allow'],
    ]);
    expect(await workspace(runId)).toEqual({ 'a.txt': '4' });
  });

  it('http_request: asks per host and method, grants the host for the run, refuses hosts off the list without asking', async () => {
    hits.length = 0;
    const runId = await stack.startRun('fetcher');
    const first = await approval(runId);
    expect(first.prompt).toMatchObject({ tool: 'http_request', telling: { label: 'host', value: host }, grant: { keys: [`http_request:host:GET ${host}`] } });
    expect(hits).toEqual([]);
    const offList = await stack.answer(first.id, { decision: 'allow_once', input: { url: 'http://169.254.169.254/latest' } });
    expect(offList.status).toBe(422);
    expect(offList.body.error.details.issues[0]).toMatchObject({ field: 'input.url', reason: expect.stringContaining('169.254.169.254') });
    expect((await stack.answer(first.id, { decision: 'allow_run' })).status).toBe(200);
    const post = await approval(runId, first.id);
    expect(post.prompt.input).toMatchObject({ method: 'POST' });
    expect((await stack.answer(post.id, { decision: 'allow_once' })).status).toBe(200);
    await stack.waitForStatus(runId, 'finished');
    expect(hits).toEqual([
      { method: 'GET', url: '/one' },
      { method: 'GET', url: '/two' },
      { method: 'POST', url: '/three' },
    ]);
    const results = await toolResults(runId);
    expect(JSON.parse(results[0].content)).toMatchObject({ ok: true, status: 200, body: 'hello GET' });
    expect(JSON.parse(results[3].content).error).toContain('not allowed');
    expect((await audit(runId)).map((e) => e.basis)).toEqual(['person', 'grant', 'person']);
  });
});
