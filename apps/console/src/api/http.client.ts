import { ApiError } from './api.error';
import type { AgentSummary, AnswerBody, ErrorBody, ErrorIssue, Interaction, LogEntry, ParleyEvent, Run } from './types';

export interface ApprovalFilter {
  agent?: string;
  tool?: string;
  runId?: string;
}

/** The gateway's HTTP API (same origin), authenticated with the signed-in token. */
export class HttpClient {
  constructor(
    private readonly token: string,
    /** Called on a 401 so the app can sign out (expired or revoked token). */
    private readonly onUnauthenticated: (message: string) => void,
  ) {}

  agents(): Promise<{ agents: AgentSummary[] }> {
    return this.request('GET', '/v1/agents');
  }

  /**
   * The newest `limit` runs the signed-in user may see. A member's listing may come back short with a
   * `next` (the gateway looks at 10,000 runs per call). The page reloads on every change of a run, so
   * `next` is followed only while nothing was found, for at most 3 calls.
   */
  async runs(limit = 100): Promise<{ runs: Run[] }> {
    const runs: Run[] = [];
    let after: string | null = null;
    for (let call = 0; call < 3 && runs.length === 0; call++) {
      const page: { runs: Run[]; next: string | null } = await this.request('GET', `/v1/runs?limit=${limit - runs.length}${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      runs.push(...page.runs);
      after = page.next;
      if (!after) {
        break;
      }
    }
    return { runs };
  }

  run(id: string): Promise<{ run: Run; interaction?: Interaction }> {
    return this.request('GET', `/v1/runs/${encodeURIComponent(id)}`);
  }

  log(id: string): Promise<{ entries: LogEntry[] }> {
    return this.request('GET', `/v1/runs/${encodeURIComponent(id)}/log`);
  }

  runEvents(id: string, since = 0): Promise<{ events: ParleyEvent[] }> {
    return this.request('GET', `/v1/runs/${encodeURIComponent(id)}/events?since=${since}&limit=5000`);
  }

  runInteractions(id: string): Promise<{ interactions: Interaction[] }> {
    return this.request('GET', `/v1/interactions?runId=${encodeURIComponent(id)}&status=all&limit=500`);
  }

  startRun(agent: string, task: string): Promise<{ run: Run }> {
    return this.request('POST', '/v1/runs', { agent, task });
  }

  stop(id: string): Promise<{ run: Run }> {
    return this.request('POST', `/v1/runs/${encodeURIComponent(id)}/stop`);
  }

  message(id: string, text: string): Promise<{ messageId: string; pending: number }> {
    return this.request('POST', `/v1/runs/${encodeURIComponent(id)}/messages`, { text });
  }

  answer(interactionId: string, body: AnswerBody): Promise<{ interaction: Interaction }> {
    return this.request('POST', `/v1/interactions/${encodeURIComponent(interactionId)}/answer`, body);
  }

  /** A page of the queue: the first 500 (the most a page holds), or those past `after`; `next` is non-null when more may wait past them. */
  approvals(filter: ApprovalFilter, after?: string): Promise<{ approvals: Interaction[]; next: string | null }> {
    const query = new URLSearchParams({ limit: '500' });
    if (after !== undefined) {
      query.set('after', after);
    }
    for (const [key, value] of Object.entries(filter)) {
      if (typeof value === 'string' && value.trim() !== '') {
        query.set(key, value.trim());
      }
    }
    const qs = query.toString();
    return this.request('GET', `/v1/approvals${qs ? `?${qs}` : ''}`);
  }

  claim(interactionId: string, release: boolean): Promise<{ interaction: Interaction }> {
    return this.request(release ? 'DELETE' : 'POST', `/v1/approvals/${encodeURIComponent(interactionId)}/claim`);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new ApiError(0, 'network', `the gateway cannot be reached (${error instanceof Error ? error.message : String(error)})`);
    }
    const text = await response.text();
    const parsed = parseJson(text);
    if (!response.ok) {
      const error = (parsed as Partial<ErrorBody> | undefined)?.error;
      const apiError = new ApiError(
        response.status,
        error?.code ?? 'internal',
        error?.message ?? `${response.status} ${response.statusText}`,
        issuesOf(error?.details),
      );
      if (response.status === 401) {
        this.onUnauthenticated(apiError.message);
      }
      throw apiError;
    }
    return parsed as T;
  }
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

function issuesOf(details: unknown): ErrorIssue[] {
  const issues = typeof details === 'object' && details !== null ? (details as { issues?: unknown }).issues : undefined;
  return Array.isArray(issues) ? (issues as ErrorIssue[]) : [];
}
