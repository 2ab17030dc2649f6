import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { signToken } from '@parley/platform';
import { canListen, freePort } from '../../scripts/ports';
import { waitFor } from '../support/wait-for';

const ROOT = resolve(__dirname, '..', '..');
/** Variables of the developer's shell that must not reach the stack (as in the harness). */
const OWN_ENV = /^(PARLEY_|REDIS_URL$|REDIS_CLUSTER_NODES$|PORT$|LOG_LEVEL$|ANTHROPIC_)/;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * The README's first command, as a newcomer runs it: `npm start` builds, starts a Redis of its own
 * when none answers at REDIS_URL, runs the three services and serves the demo agent. A SIGTERM to
 * the npm process (what a process manager or an IDE's stop button sends, to it alone) stops all of it,
 * once a tool call under way has finished, though it outlasts the services' grace period.
 */
describe('npm start', () => {
  let npm: ChildProcess | undefined;
  let redisPort = 0;
  const output: string[] = [];
  // The shipped demo, and an agent whose shell command outlasts the grace period given below.
  const agentsDir = mkdtempSync(join(tmpdir(), 'parley-npm-start-'));
  copyFileSync(join(ROOT, 'agents', 'demo.yaml'), join(agentsDir, 'demo.yaml'));
  writeFileSync(
    join(agentsDir, 'sleeper.yaml'),
    [
      'name: sleeper',
      'model:',
      '  provider: scripted',
      '  turns:',
      '    - tool_calls: [{ name: shell, input: { command: "sleep 12; echo slept > out.txt" } }]',
      '    - tool_calls: [{ name: finish, input: { summary: done } }]',
      'tools: [shell, finish]',
      'permissions: { shell: allow }',
      '',
    ].join('\n'),
  );

  afterAll(() => {
    if (npm && npm.exitCode === null) {
      npm.kill('SIGKILL');
    }
    const pids = [...output.join('\n').matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1]));
    pids.filter(alive).forEach((pid) => process.kill(pid, 'SIGKILL'));
    if (redisPort) {
      rmSync(join(ROOT, '.parley', 'redis', String(redisPort)), { recursive: true, force: true });
    }
    rmSync(agentsDir, { recursive: true, force: true });
  });

  it('runs the demo on a Redis it starts itself, and a SIGTERM to npm stops every process it started once a running tool call is done', async () => {
    redisPort = await freePort();
    const port = await freePort();
    const secret = `npm-start-${randomUUID()}`;
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !OWN_ENV.test(key)));
    const env = { ...inherited, REDIS_URL: `redis://127.0.0.1:${redisPort}`, PORT: String(port), PARLEY_OPS_PORT: '0', PARLEY_JWT_SECRET: secret, NO_COLOR: '1' };
    Object.assign(env, { PARLEY_AGENTS_DIR: agentsDir, PARLEY_SHUTDOWN_GRACE_MS: '1000' });
    npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    npm.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    npm.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const exited = once(npm, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;

    await waitFor(() => output.join('').includes('Parley is running.'), { timeoutMs: 150_000, intervalMs: 100, message: `npm start to be up; it printed:\n${output.join('')}` });
    const text = output.join('');
    expect(text).toContain(`starting redis-server on 127.0.0.1:${redisPort}`);
    const pids = [...text.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(3);

    // The scripted demo agent: started over HTTP, it parks on its first question.
    const url = `http://127.0.0.1:${port}`;
    const headers = { authorization: `Bearer ${signToken({ tenant: 'dev', sub: 'newcomer', role: 'member' }, secret)}`, 'content-type': 'application/json' };
    const started = await fetch(`${url}/v1/runs`, { method: 'POST', headers, body: JSON.stringify({ agent: 'demo', task: 'Plan a team offsite' }) });
    expect(started.status).toBe(201);
    const { run } = (await started.json()) as { run: { id: string } };
    const question = await waitFor(
      async () => {
        const listed = (await (await fetch(`${url}/v1/interactions?runId=${run.id}`, { headers })).json()) as { interactions: Array<{ prompt: { kind: string } }> };
        return listed.interactions[0];
      },
      { timeoutMs: 30_000, message: 'the demo run to ask its first question' },
    );
    expect(question.prompt.kind).toBe('multiple_choice');

    const sleeper = (await (await fetch(`${url}/v1/runs`, { method: 'POST', headers, body: JSON.stringify({ agent: 'sleeper', task: 'sleep' }) })).json()) as { run: { id: string } };
    await waitFor(
      async () => {
        const page = (await (await fetch(`${url}/v1/runs/${sleeper.run.id}/events`, { headers })).json()) as { events: Array<{ type: string }> };
        return page.events.some((event) => event.type === 'tool.call');
      },
      { message: 'the shell command to be running' },
    );

    // To npm alone, not its process group.
    npm.kill('SIGTERM');
    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(output.join('')).not.toContain('SIGKILL');
    expect(output.join('')).toMatch(/parley\s+\| stopped\n/);
    await waitFor(() => pids.every((pid) => !alive(pid)), { message: 'the three services to have exited' });
    expect(await canListen('127.0.0.1', port)).toBe(true);
    expect(await canListen('127.0.0.1', redisPort)).toBe(true);
  }, 200_000);
});
