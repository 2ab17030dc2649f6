import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { WEBHOOK_LIMITS } from '@parley/contracts';
import { BlockedAddressError, guardedLookup, hostOf, isPrivateAddress } from '@parley/store';

export interface SendResult {
  /** delivered: 2xx. retry: 408, 429, 5xx, timeout, network. permanent: any other reply, a redirect, a blocked address. */
  outcome: 'delivered' | 'retry' | 'permanent';
  status?: number;
  error?: string;
  durationMs: number;
}

export interface SenderOptions {
  timeoutMs: number;
  allowPrivate: boolean;
}

/**
 * One POST to a receiver. node:http rather than fetch: its `lookup` hook lets the connection go to
 * exactly the address that was checked (fetch resolves again on its own), and it never follows
 * redirects. The timeout covers connecting, the reply and its body.
 */
export class WebhookSender {
  constructor(private readonly options: SenderOptions) {}

  async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = Date.now();
    const done = (result: Omit<SendResult, 'durationMs'>): SendResult => ({ ...result, durationMs: Date.now() - started });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return done({ outcome: 'permanent', error: 'the endpoint URL is not valid' });
    }
    const host = hostOf(target);
    if (!this.options.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) {
      return done({ outcome: 'permanent', error: `address ${host} is private or local` });
    }
    try {
      const { status, text } = await this.post(target, headers, body);
      if (status >= 200 && status < 300) {
        return done({ outcome: 'delivered', status });
      }
      const error = describeReply(status, text);
      if (status === 408 || status === 429 || status >= 500) {
        return done({ outcome: 'retry', status, error });
      }
      return done({ outcome: 'permanent', status, error });
    } catch (error) {
      if (error instanceof BlockedAddressError) {
        return done({ outcome: 'permanent', error: error.message });
      }
      if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
        return done({ outcome: 'retry', error: `timed out after ${this.options.timeoutMs} ms` });
      }
      const code = (error as NodeJS.ErrnoException).code;
      const message = error instanceof Error ? error.message : String(error);
      return done({ outcome: 'retry', error: code && !message.includes(code) ? `${code}: ${message}` : message });
    }
  }

  private post(target: URL, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = request(
        target,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          lookup: guardedLookup(this.options.allowPrivate),
          signal: AbortSignal.timeout(this.options.timeoutMs),
          agent: false,
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          res.on('data', (chunk: Buffer) => {
            // Only the start of the reply is logged; the rest is read and dropped.
            if (kept < WEBHOOK_LIMITS.responseChars * 4) {
              chunks.push(chunk);
              kept += chunk.length;
            }
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
}

function describeReply(status: number, text: string): string {
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, WEBHOOK_LIMITS.responseChars);
  const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
  return `HTTP ${status}${redirect}${snippet ? `: ${snippet}` : ''}`;
}
