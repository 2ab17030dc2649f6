import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ForbiddenError, NotFoundError, ParleyError, StartRunBodySchema, isUnattendedTrigger, parseOrThrow, type Interaction, type Run } from '@parley/contracts';
import type { SafeCommand } from '../api/api.client';
import { FakeGatewayScript } from './fake.gateway.script';
import { toBody } from './fake.gateway.state';

/** The fake gateway's HTTP API: route() serves `/v1/...` from the in-memory state. */
export abstract class FakeGatewayHttp extends FakeGatewayScript {
  protected async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const header = req.headers.authorization ?? '';
      const claims = await this.authenticate(header.startsWith('Bearer ') ? header.slice(7) : '');
      const url = new URL(req.url ?? '/', 'http://fake');
      const [version, collection, id, action] = url.pathname.split('/').filter((part) => part !== '');
      const route = `${req.method ?? 'GET'} ${[version, collection, id === undefined ? undefined : ':id', action].filter((part) => part !== undefined).join('/')}`;
      const query = url.searchParams;
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const reply = (status: number, value: unknown): void => send(res, status, value);
      switch (route) {
        case 'GET v1/agents':
          return reply(200, { agents: this.agents });
        case 'POST v1/runs': {
          const start = parseOrThrow(StartRunBodySchema, body, 'run');
          if (!this.agents.some((agent) => agent.name === start.agent)) {
            throw new NotFoundError('agent', start.agent);
          }
          const now = new Date().toISOString();
          const run: Run = {
            id: randomUUID(),
            tenant: claims.tenant,
            owner: claims.sub,
            agent: start.agent,
            task: start.task,
            trigger: start.trigger,
            status: 'queued',
            unattended: start.unattended === true || isUnattendedTrigger(start.trigger),
            createdAt: now,
            updatedAt: now,
          };
          this.runs.set(run.id, run);
          this.emit(run.id, { type: 'run.created', data: { agent: run.agent, task: run.task, trigger: run.trigger } });
          setImmediate(() => this.onRunStarted(run));
          return reply(201, { run });
        }
        case 'GET v1/runs': {
          const status = query.get('status');
          const limit = Number(query.get('limit') ?? 50);
          const found = [...this.runs.values()].filter((run) => status === null || run.status === status).reverse();
          // Its cursor is a count (the gateway's names a place in its run index).
          const from = Number(query.get('after') ?? 0);
          return reply(200, { runs: found.slice(from, from + limit), next: from + limit < found.length ? String(from + limit) : null });
        }
        case 'GET v1/runs/:id': {
          this.onGetRun(id);
          const run = this.mustGetRun(id);
          const open = [...this.interactions.values()].find((interaction) => interaction.runId === id && interaction.status === 'open');
          return reply(200, open === undefined ? { run } : { run, interaction: open });
        }
        case 'GET v1/runs/:id/events': {
          this.mustGetRun(id);
          const since = Number(query.get('since') ?? 0);
          const limit = Number(query.get('limit') ?? 1000);
          const missing = this.events.some((event) => event.runId === id && event.seq > since && event.seq <= this.trimmedUpTo);
          const kept = this.events.filter((event) => event.runId === id && event.seq > Math.max(since, this.trimmedUpTo));
          return reply(200, { events: kept.slice(0, limit), truncated: missing });
        }
        case 'GET v1/runs/:id/log':
          this.mustGetRun(id);
          return reply(200, { entries: [] });
        case 'GET v1/runs/:id/audit':
          this.mustGetRun(id);
          return reply(200, { entries: this.audits.get(id) ?? [] });
        case 'GET v1/approvals':
          return reply(200, this.openApprovals(query));
        case 'GET v1/approvals/:id':
          if (id !== 'safe-commands') {
            break;
          }
          return reply(200, this.safeCommandsFor(query.get('agent') ?? undefined));
        case 'POST v1/approvals/:id/claim':
        case 'DELETE v1/approvals/:id/claim':
          return reply(200, { interaction: this.claim(id, { kind: 'user', subject: claims.sub, role: claims.role }, req.method === 'DELETE') });
        case 'POST v1/runs/:id/stop':
        case 'POST v1/runs/:id/cancel':
          return reply(200, { run: this.stopRun(id, { kind: 'user', subject: claims.sub, role: claims.role }) });
        case 'POST v1/runs/:id/messages':
          return reply(202, this.postMessage(id, body, { kind: 'user', subject: claims.sub, role: claims.role }));
        case 'GET v1/schedules':
          if (claims.role === 'member') {
            throw new ForbiddenError('only admins and services list schedules');
          }
          return reply(200, { schedules: this.schedules });
        case 'GET v1/interactions': {
          const all = query.get('status') === 'all';
          const runId = query.get('runId');
          const found = [...this.interactions.values()].filter(
            (interaction) => (all || interaction.status === 'open') && (runId === null || interaction.runId === runId),
          );
          // Its cursor is a count (the gateway's names a place in its queue).
          const [from, limit] = [Number(query.get('after') ?? 0), Number(query.get('limit') ?? 100)];
          return reply(200, { interactions: found.slice(from, from + limit), next: from + limit < found.length ? String(from + limit) : null });
        }
        case 'GET v1/interactions/:id':
          return reply(200, { interaction: this.mustGetInteraction(id) });
        case 'POST v1/interactions/:id/answer':
          return reply(200, { interaction: this.answer(id, body, { kind: 'user', subject: claims.sub, role: claims.role }) });
        default:
          break;
      }
      return reply(404, { error: { code: 'not_found', message: `no route ${route}` } });
    } catch (error) {
      send(res, error instanceof ParleyError ? error.status : 500, toBody(error));
    }
  }

  /** Its cursor is the id of the last approval given (the gateway's also names a position in its index). */
  private openApprovals(query: URLSearchParams): { approvals: Interaction[]; next: string | null } {
    const [agent, tool, runId, after] = ['agent', 'tool', 'runId', 'after'].map((key) => query.get(key));
    const limit = Number(query.get('limit') ?? 100);
    const queue = [...this.interactions.values()]
      .filter(
        (interaction) =>
          interaction.status === 'open' &&
          interaction.prompt.kind === 'tool_approval' &&
          (agent === null || interaction.agent === agent) &&
          (tool === null || interaction.prompt.tool === tool) &&
          (runId === null || interaction.runId === runId),
      )
      .sort((a, b) => deadlineOrder(a.deadline) - deadlineOrder(b.deadline));
    const from = after === null ? 0 : queue.findIndex((interaction) => interaction.id === after) + 1;
    const approvals = queue.slice(from, from + limit);
    return { approvals, next: from + limit < queue.length ? approvals[approvals.length - 1].id : null };
  }

  private safeCommandsFor(agent: string | undefined): { agent: string | null; safeCommands: SafeCommand[] } {
    if (agent !== undefined && !this.agents.some((known) => known.name === agent)) {
      throw new NotFoundError('agent', agent);
    }
    const sources = new Set(['default', 'global', ...(agent === undefined ? [] : [`agent:${agent}`])]);
    return { agent: agent ?? null, safeCommands: this.safeCommands.filter((command) => sources.has(command.source)) };
  }

}

/** Oldest deadline first; approvals that wait forever last. */
function deadlineOrder(deadline: string | null): number {
  return deadline === null ? Number.POSITIVE_INFINITY : Date.parse(deadline);
}

function send(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}
