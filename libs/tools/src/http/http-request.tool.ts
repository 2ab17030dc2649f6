import { z } from 'zod';
import { atMostOnce, type EffectRecords } from '../effect.records';
import { checkInput } from '../tool.input';
import { errorResult, type ToolResult } from '../tool-result';
import { toolsInFlight } from '../tools-in-flight';
import { truncateUtf8, utf8ByteLength } from '../utf8';

export const HTTP_MAX_HEADERS = 20;
export const HTTP_HEADER_VALUE_MAX_BYTES = 4 * 1024;
export const HTTP_BODY_MAX_BYTES = 256 * 1024;

/**
 * Headers the model may not set: the ones that frame the message or the connection (the client sets
 * them, and a wrong one smuggles a second request), and Idempotency-Key, which carries the effect id.
 * Cookie and Authorization are allowed: the host allow-list, not the header, is what limits the reach.
 */
const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
  'proxy-connection',
  'idempotency-key',
]);

/** RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const isAbsent = (input: unknown): boolean => input === undefined || input === null;

const bytesAtMost = (max: number) => (text: string) => utf8ByteLength(text) <= max;

function parsedUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function urlProblem(text: string): string | null {
  const url = parsedUrl(text);
  if (url === null) {
    return 'must be an absolute URL, e.g. https://api.example.com/v1/items';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `must be an http:// or https:// URL, not ${url.protocol}`;
  }
  if (url.username !== '' || url.password !== '') {
    return 'must not contain a user name or password; send credentials in a header';
  }
  return null;
}

function headerProblem(name: string, value: string): string | null {
  if (!HEADER_NAME.test(name)) {
    return 'is not a valid header name';
  }
  if (FORBIDDEN_HEADERS.has(name.toLowerCase())) {
    return 'is set by Parley and may not be given';
  }
  return /[\r\n\0]/.test(value) ? 'must not contain line breaks or NUL characters' : null;
}

export const HttpRequestInputSchema = z
  .strictObject({
    method: z.enum(['GET', 'POST'], { error: 'must be "GET" or "POST"' }).default('GET').describe('GET (the default) or POST'),
    url: z
      .string({ error: (issue) => (isAbsent(issue.input) ? 'is required' : 'must be a string') })
      .superRefine((text, context) => {
        const problem = urlProblem(text);
        if (problem !== null) {
          context.addIssue({ code: 'custom', message: problem });
        }
      })
      .describe("The full http:// or https:// URL; its host must be on the agent's allow-list"),
    headers: z
      .record(
        z.string(),
        z.string({ error: 'must be a string' }).refine(bytesAtMost(HTTP_HEADER_VALUE_MAX_BYTES), `must be at most ${HTTP_HEADER_VALUE_MAX_BYTES} bytes`),
        { error: 'must be an object of header names to string values' },
      )
      .superRefine((headers, context) => {
        const names = Object.keys(headers);
        if (names.length > HTTP_MAX_HEADERS) {
          context.addIssue({ code: 'custom', message: `at most ${HTTP_MAX_HEADERS} headers` });
        }
        for (const name of names) {
          const problem = headerProblem(name, headers[name]);
          if (problem !== null) {
            context.addIssue({ code: 'custom', path: [name], message: problem });
          }
        }
      })
      .optional()
      .describe(`Optional request headers, e.g. {"Accept": "application/json"} (at most ${HTTP_MAX_HEADERS})`),
    body: z
      .string({ error: 'must be a string' })
      .refine(bytesAtMost(HTTP_BODY_MAX_BYTES), `must be at most ${HTTP_BODY_MAX_BYTES} bytes`)
      .optional()
      .describe(`Request body, POST only (at most ${HTTP_BODY_MAX_BYTES} bytes); set Content-Type to match`),
  })
  .refine((input) => input.method === 'POST' || input.body === undefined, {
    path: ['body'],
    message: 'a GET request has no body; use POST to send one',
  });

export interface HttpPolicy {
  allowedHosts: readonly string[];
  timeoutMs: number;
  maxResponseBytes: number;
}

export interface HttpRequestCall {
  input: unknown;
  /** Sent as the Idempotency-Key header, so that a server can recognise a retried POST. */
  effectId: string;
  policy: HttpPolicy;
  /** Where the result is recorded under the effect id: a retried step replays it, and a POST is sent at most once (see atMostOnce). */
  records?: EffectRecords;
}

interface HostPattern {
  /** Any subdomain of `hostname`, not the apex itself. */
  wildcard: boolean;
  hostname: string;
  /** null: only the default port of the URL's scheme. */
  port: number | null;
}

/**
 * "api.example.com", "*.example.org" (any subdomain, not the apex), "127.0.0.1:8080" (port must match;
 * without a port, only the scheme's default port matches). Case-insensitive. Names and addresses are
 * compared in their URL-normalised form (IDNs as punycode, "[::1]", a trailing dot dropped).
 * A pattern that is no host at all matches nothing.
 */
export function hostAllowed(url: URL, allowedHosts: readonly string[]): boolean {
  const hostname = withoutTrailingDot(url.hostname.toLowerCase());
  return allowedHosts.some((raw) => {
    const pattern = parsePattern(raw);
    if (pattern === null) {
      return false;
    }
    // URL drops a default port ("https://a:443" has port ""), so "" is exactly the scheme's default port.
    const portMatches = pattern.port === null ? url.port === '' : pattern.port === (url.port === '' ? defaultPort(url.protocol) : Number(url.port));
    return portMatches && (pattern.wildcard ? hostname.endsWith(`.${pattern.hostname}`) : hostname === pattern.hostname);
  });
}

/** The telling argument of a request: host[:port] as written in URL.host, lowercased. */
export function requestHost(url: URL): string {
  return url.host.toLowerCase();
}

function parsePattern(raw: string): HostPattern | null {
  let text = raw.trim().toLowerCase();
  const wildcard = text.startsWith('*.');
  if (wildcard) {
    text = text.slice(2);
  }
  if (text === '' || /[/?#@*\s\\]/.test(text)) {
    return null;
  }
  let port: number | null = null;
  const withPort = /^(\[[^\]]*\]|[^:]*):(\d{1,5})$/.exec(text);
  if (withPort !== null) {
    text = withPort[1];
    port = Number(withPort[2]);
  } else if (text.includes(':') && !text.startsWith('[')) {
    text = `[${text}]`; // a bare IPv6 address
  }
  const parsed = parsedUrl(`http://${text}/`);
  if (parsed === null || parsed.hostname === '' || (port !== null && (port < 1 || port > 65535))) {
    return null;
  }
  return { wildcard, hostname: withoutTrailingDot(parsed.hostname), port };
}

function withoutTrailingDot(hostname: string): string {
  return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
}

function defaultPort(protocol: string): number {
  return protocol === 'https:' ? 443 : 80;
}

/**
 * Sends one HTTP request for the model, to an allowed host only. Nothing is sent when the input or the
 * host is refused. Redirects are not followed. An HTTP error status is information for the model, not
 * its mistake (`isError` false); neither is a timeout or a refused connection.
 */
export async function executeHttpRequest(call: HttpRequestCall): Promise<ToolResult> {
  const { input, effectId, policy } = call;
  const checked = checkInput('http_request', HttpRequestInputSchema, input);
  if (!checked.ok) {
    return errorResult(checked.error);
  }
  const { method, headers = {}, body } = checked.value;
  const url = new URL(checked.value.url);
  if (!hostAllowed(url, policy.allowedHosts)) {
    const allowed = policy.allowedHosts.length === 0 ? 'no hosts are allowed for this agent' : `allowed hosts: ${policy.allowedHosts.join(', ')}`;
    return errorResult(`host ${requestHost(url)} is not allowed; nothing was sent (${allowed})`);
  }

  const send = async (): Promise<ToolResult> => {
    const running = toolsInFlight.begin(policy.timeoutMs);
    try {
      return await sendRequest(url, method, headers, body, effectId, policy);
    } finally {
      running();
    }
  };
  return call.records ? atMostOnce(call.records, effectId, method === 'POST' ? method : null, send) : send();
}

async function sendRequest(url: URL, method: string, headers: Record<string, string>, body: string | undefined, effectId: string, policy: HttpPolicy): Promise<ToolResult> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { ...headers, 'Idempotency-Key': effectId },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(policy.timeoutMs),
    });
  } catch (error) {
    return errorResult(sendFailure(error, method, policy.timeoutMs), false);
  }

  let read: { text: string; truncated: boolean };
  try {
    read = await readBody(response, policy.maxResponseBytes);
  } catch (error) {
    return errorResult(`${describeFailure(error, policy.timeoutMs)} while reading the response (status ${response.status})`, false);
  }

  const location = locationOf(response, url);
  return { content: JSON.stringify({ ok: response.status < 400, ...resultFields(response, read, location, policy) }), isError: false };
}

function resultFields(response: Response, read: { text: string; truncated: boolean }, location: URL | null, policy: HttpPolicy): Record<string, unknown> {
  const contentType = response.headers.get('content-type');
  return {
    status: response.status,
    headers: {
      ...(contentType === null ? {} : { 'content-type': contentType }),
      ...(location === null ? {} : { location: location.href }),
    },
    body: read.text,
    ...(read.truncated ? { truncated: true } : {}),
    ...(location !== null && response.status >= 300 && response.status < 400 ? { redirect: redirectNote(location, policy.allowedHosts) } : {}),
  };
}

/** The Location header resolved against the request URL; null when there is none or it is no URL. */
function locationOf(response: Response, url: URL): URL | null {
  const location = response.headers.get('location');
  if (location === null) {
    return null;
  }
  try {
    return new URL(location, url);
  } catch {
    return null;
  }
}

function redirectNote(location: URL, allowedHosts: readonly string[]): string {
  const http = location.protocol === 'http:' || location.protocol === 'https:';
  return http && hostAllowed(location, allowedHosts)
    ? 'not followed; call http_request again with the location if you need it'
    : `not followed; the location's host ${requestHost(location)} is not allowed, so it cannot be requested`;
}

/**
 * Reads at most `maxBytes` of the body (plus the few bytes completing a character cut there), then
 * cancels the rest; decoded lossily as UTF-8 and cut to `maxBytes` between characters.
 */
async function readBody(response: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (response.body === null) {
    return { text: '', truncated: false };
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  const keep = maxBytes + 3;
  let kept = 0;
  let seen = 0;
  for (;;) {
    const next = await reader.read();
    if (next.done) {
      break;
    }
    const value = next.value as Uint8Array;
    seen += value.length;
    if (kept < keep) {
      const part = value.subarray(0, keep - kept);
      chunks.push(part);
      kept += part.length;
    }
    if (seen > keep) {
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  const decoded = new TextDecoder('utf-8').decode(Buffer.concat(chunks));
  const text = truncateUtf8(decoded, maxBytes);
  return { text, truncated: seen > kept || text.length < decoded.length };
}

function sendFailure(error: unknown, method: string, timeoutMs: number): string {
  const reason = describeFailure(error, timeoutMs);
  return method === 'POST'
    ? `${reason}; the server may or may not have received the request (a retry carries the same Idempotency-Key)`
    : `${reason}; no response`;
}

function describeFailure(error: unknown, timeoutMs: number): string {
  // Fields, not instanceof: fetch's errors may come from another realm (e.g. under a test runner's VM).
  const { name, message, cause } = fieldsOf(error);
  if (name === 'TimeoutError' || name === 'AbortError') {
    return `request timed out after ${timeoutMs} ms`;
  }
  const reason = fieldsOf(cause);
  if (reason.message !== undefined) {
    return `request failed: ${reason.code === undefined ? reason.message : `${reason.code} (${reason.message})`}`;
  }
  return `request failed: ${message ?? String(error)}`;
}

function fieldsOf(error: unknown): { name?: string; message?: string; code?: string; cause?: unknown } {
  if (typeof error !== 'object' || error === null) {
    return {};
  }
  const { name, message, code, cause } = error as Record<string, unknown>;
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  return { name: text(name), message: text(message), code: text(code), cause };
}
