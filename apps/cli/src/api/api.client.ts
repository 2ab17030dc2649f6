import { z } from 'zod';
import {
  AgentSummarySchema,
  AuditEntrySchema,
  InteractionSchema,
  LogEntrySchema,
  RunSchema,
  SafeCommandsReplySchema,
  ScheduleInfoSchema,
  type SafeCommandInEffect,
  type SafeCommandsReply,
  type AgentSummary,
  type AnswerBody,
  type AuditEntry,
  type Interaction,
  type LogEntry,
  type Run,
  type RunStatus,
  type ScheduleInfo,
  type StartRunBody,
} from '@parley/contracts';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { rootCauseMessage } from '../errors.describe';
import { answeredWith } from './answer.match';
import { ApiError, ReceivedErrorBodySchema } from './api.error';
import { tokenSubject } from './token.subject';
import { RawEventSchema, type RawEvent } from './event.parse';

const REQUEST_TIMEOUT_MS = 30_000;
/**
 * Pauses before the second and third try of a request that may be repeated safely (a read, a keyed
 * start or message, an answer), after a failure that says nothing about it having been done: a
 * dropped or refused connection, or a gateway that was unavailable (502, 503, 504). Not after a
 * request that timed out: three of those would keep the caller waiting for a minute and a half.
 */
const RETRY_PAUSES_MS = [250, 1000];
const UNAVAILABLE = new Set([502, 503, 504]);

const AgentsReply = z.object({ agents: z.array(AgentSummarySchema) });
const RunReply = z.object({ run: RunSchema });
/** The gateway's own default for GET /v1/runs. */
const DEFAULT_RUNS_LIMIT = 50;
/** Calls one listing of runs makes at most (each looks at up to 10,000 runs). */
const LISTING_CALLS = 20;
const RunsReply = z.object({ runs: z.array(RunSchema), next: z.string().nullish() });
const RunDetailReply = z.object({ run: RunSchema, interaction: InteractionSchema.nullish() });
// `truncated`: events after `since` were trimmed from the stream (gateways before 2026-11-30 do not say).
const EventsReply = z.object({ events: z.array(RawEventSchema), truncated: z.boolean().default(false) });
const LogReply = z.object({ entries: z.array(LogEntrySchema) });
const InteractionsReply = z.object({ interactions: z.array(InteractionSchema), next: z.string().nullable().default(null) });
const InteractionReply = z.object({ interaction: InteractionSchema });
// `next` is absent from a gateway older than paged approvals: its listing is one page.
const ApprovalsReply = z.object({ approvals: z.array(InteractionSchema), next: z.string().nullable().default(null) });
const AuditReply = z.object({ entries: z.array(AuditEntrySchema) });
const MessageReply = z.object({ messageId: z.string(), pending: z.int().min(0) });
const SchedulesReply = z.object({ schedules: z.array(ScheduleInfoSchema) });

export type SafeCommand = SafeCommandInEffect;
export type SafeCommands = SafeCommandsReply;

/** How a run is started: unattended runs get no human tools; `trigger` says who started it (a person chatting, or a program). */
export type StartRunOptions = Partial<Pick<StartRunBody, 'unattended' | 'trigger'>>;

/** A message queued for a run: it reaches the model between inference calls (`pending` counts the queue). */
export type QueuedMessage = z.infer<typeof MessageReply>;

export type ApprovalsQuery = { agent?: string; tool?: string; runId?: string; limit?: number; after?: string };

type Query = Record<string, string | number | undefined>;

interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Sent as `Idempotency-Key`, the same on every try. */
  idempotencyKey?: string;
  /** Tried again after a transient failure (default: GETs only). */
  retry?: boolean;
  /** Counts the tries made. */
  tries?: { made: number };
}

/** The gateway's HTTP API. Every failure is an ApiError carrying the gateway's code and message. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
    private readonly fetchFn: typeof fetch = fetch,
    private readonly retryPausesMs: readonly number[] = RETRY_PAUSES_MS,
  ) {}

  async listAgents(): Promise<AgentSummary[]> {
    return (await this.request('GET', '/v1/agents', AgentsReply)).agents;
  }

  async startRun(agent: string, task: string, options: StartRunOptions = {}): Promise<Run> {
    const body = {
      agent,
      task,
      ...(options.unattended === undefined ? {} : { unattended: options.unattended }),
      ...(options.trigger === undefined ? {} : { trigger: options.trigger }),
    };
    // One key for this start, on every try: a start whose reply was lost is not made twice.
    return (await this.request('POST', '/v1/runs', RunReply, { body, idempotencyKey: randomUUID(), retry: true })).run;
  }

  /**
   * Up to `limit` runs (the gateway's default: 50), newest first, from `after` (a `next` of an earlier
   * listing) on. A filtered listing may come back short with a `next` to go on from (the gateway
   * looks at 10,000 runs per call): it is followed, for at most LISTING_CALLS calls. `next`: where
   * the following runs start, null when none are left.
   */
  async listRuns(query: { status?: RunStatus; limit?: number; after?: string } = {}): Promise<{ runs: Run[]; next: string | null }> {
    const { after: first, ...filter } = query;
    const limit = query.limit ?? DEFAULT_RUNS_LIMIT;
    const runs: Run[] = [];
    let after = first;
    let next: string | null = null;
    for (let call = 0; call < LISTING_CALLS && runs.length < limit; call++) {
      const page = await this.request('GET', '/v1/runs', RunsReply, { query: { ...filter, limit: limit - runs.length, ...(after ? { after } : {}) } });
      runs.push(...page.runs);
      next = page.next ?? null;
      if (next === null) {
        break;
      }
      after = next;
    }
    return { runs, next };
  }

  async getRun(runId: string): Promise<{ run: Run; interaction?: Interaction }> {
    const reply = await this.request('GET', `/v1/runs/${segment(runId)}`, RunDetailReply);
    return reply.interaction ? { run: reply.run, interaction: reply.interaction } : { run: reply.run };
  }

  async listEvents(runId: string, query: { since?: number; limit?: number } = {}): Promise<{ events: RawEvent[]; truncated: boolean }> {
    return this.request('GET', `/v1/runs/${segment(runId)}/events`, EventsReply, { query });
  }

  async getLog(runId: string): Promise<LogEntry[]> {
    return (await this.request('GET', `/v1/runs/${segment(runId)}/log`, LogReply)).entries;
  }

  /** Stops a run (409 when it has already ended). A run a worker holds ends at its next step, so it may still be running. */
  async stopRun(runId: string): Promise<Run> {
    return (await this.request('POST', `/v1/runs/${segment(runId)}/stop`, RunReply, { body: {} })).run;
  }

  /** Queues a message for a run (409 when the run has ended). */
  async sendMessage(runId: string, text: string): Promise<QueuedMessage> {
    return this.request('POST', `/v1/runs/${segment(runId)}/messages`, MessageReply, { body: { text }, idempotencyKey: randomUUID(), retry: true });
  }

  /** The agents' cron schedules. */
  async listSchedules(): Promise<ScheduleInfo[]> {
    return (await this.request('GET', '/v1/schedules', SchedulesReply)).schedules;
  }

  /** A page of interactions; `next` (null at the end) is the `after` of the following page. */
  async listInteractions(query: { status?: 'open' | 'all'; runId?: string; after?: string } = {}): Promise<{ interactions: Interaction[]; next: string | null }> {
    return this.request('GET', '/v1/interactions', InteractionsReply, { query });
  }

  async getInteraction(interactionId: string): Promise<Interaction> {
    return (await this.request('GET', `/v1/interactions/${segment(interactionId)}`, InteractionReply)).interaction;
  }

  /**
   * Answers an interaction. A try whose reply was lost may have been recorded (or an earlier send
   * over the socket that could not be confirmed, `sentBefore`): the 409 a later try then gets is for
   * this very answer when the caller resolved the interaction with it, and that is a success.
   */
  async answer(interactionId: string, body: AnswerBody, options: { sentBefore?: boolean } = {}): Promise<Interaction> {
    const path = `/v1/interactions/${segment(interactionId)}/answer`;
    const tries = { made: 0 };
    try {
      return (await this.request('POST', path, InteractionReply, { body, retry: true, tries })).interaction;
    } catch (error) {
      const subject = tokenSubject(this.token);
      const mayBeOurs = options.sentBefore === true || tries.made > 1;
      if (!mayBeOurs || !(error instanceof ApiError) || error.status !== 409 || subject === undefined) {
        throw error;
      }
      const current = await this.getInteraction(interactionId).catch(() => undefined);
      if (current !== undefined && answeredWith(current, body, subject)) {
        return current;
      }
      throw error;
    }
  }

  /** A page of the open tool approvals the caller may see, oldest deadline first; `next` is where the following page starts. */
  async listApprovals(query: ApprovalsQuery = {}): Promise<{ approvals: Interaction[]; next: string | null }> {
    return this.request('GET', '/v1/approvals', ApprovalsReply, { query });
  }

  /** Admins only: take an open approval so only the caller may answer it for a while (409 when someone else holds it). */
  async claimApproval(interactionId: string): Promise<Interaction> {
    return (await this.request('POST', `/v1/approvals/${segment(interactionId)}/claim`, InteractionReply)).interaction;
  }

  async releaseApproval(interactionId: string): Promise<Interaction> {
    return (await this.request('DELETE', `/v1/approvals/${segment(interactionId)}/claim`, InteractionReply)).interaction;
  }

  /** The safe commands in effect for an agent, or for every agent without one. */
  async safeCommands(agent?: string): Promise<SafeCommands> {
    return this.request('GET', '/v1/approvals/safe-commands', SafeCommandsReplySchema, { query: { agent } });
  }

  /** Every decision on a call of this run that needed approval. */
  async getAudit(runId: string): Promise<AuditEntry[]> {
    return (await this.request('GET', `/v1/runs/${segment(runId)}/audit`, AuditReply)).entries;
  }

  private async request<S extends z.ZodType>(method: 'GET' | 'POST' | 'DELETE', path: string, schema: S, options: RequestOptions = {}): Promise<z.infer<S>> {
    const retry = options.retry ?? method === 'GET';
    for (let tried = 0; ; tried++) {
      try {
        if (options.tries) {
          options.tries.made = tried + 1;
        }
        return await this.requestOnce(method, path, schema, options);
      } catch (error) {
        const transient = error instanceof ApiError && ((error.code === 'network_error' && !timedOut(error)) || UNAVAILABLE.has(error.status));
        if (!retry || !transient || tried >= this.retryPausesMs.length) {
          throw error;
        }
        await sleep(this.retryPausesMs[tried]);
      }
    }
  }

  private async requestOnce<S extends z.ZodType>(method: 'GET' | 'POST' | 'DELETE', path: string, schema: S, options: RequestOptions): Promise<z.infer<S>> {
    const url = `${this.baseUrl}${path}${queryString(options.query)}`;
    let response: Response;
    try {
      response = await this.fetchFn(url, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          accept: 'application/json',
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey }),
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new ApiError(0, 'network_error', `cannot reach the gateway at ${this.baseUrl}: ${describeFetchError(error)}`, { timedOut: isTimeout(error) });
    }
    const json = parseJson(await response.text());
    if (!response.ok) {
      const body = ReceivedErrorBodySchema.safeParse(json);
      if (body.success) {
        throw ApiError.fromBody(body.data, response.status);
      }
      throw new ApiError(response.status, 'http_error', `${method} ${path} failed: HTTP ${response.status} ${response.statusText}`.trim());
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
      throw new ApiError(response.status, 'bad_response', `unexpected reply to ${method} ${path}: ${issues}`);
    }
    return parsed.data;
  }
}

function segment(id: string): string {
  return encodeURIComponent(id);
}

function queryString(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) {
      params.set(key, String(value));
    }
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function parseJson(text: string): unknown {
  if (text === '') {
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isTimeout(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'TimeoutError';
}

/** A network_error whose request got no reply in time (it may still have been done). */
function timedOut(error: ApiError): boolean {
  return (error.details as { timedOut?: boolean } | undefined)?.timedOut === true;
}

function describeFetchError(error: unknown): string {
  return isTimeout(error) ? `no reply within ${REQUEST_TIMEOUT_MS / 1000}s` : rootCauseMessage(error);
}
