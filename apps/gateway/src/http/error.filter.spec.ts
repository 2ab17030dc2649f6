import type { ArgumentsHost } from '@nestjs/common';
import { StoreUnavailableError } from '@parley/contracts';
import { ReplyLostError } from '@parley/platform';
import { ErrorFilter } from './error.filter';

/** What the filter sends for `exception` thrown by a request of `method` (with or without an Idempotency-Key). */
function reply(exception: unknown, method: string, idempotencyKey?: string): { status: number; body: any; headers: Record<string, string> } {
  const sent = { status: 0, body: undefined as unknown, headers: {} as Record<string, string> };
  const response = {
    setHeader: (name: string, value: string) => void (sent.headers[name.toLowerCase()] = value),
    status(code: number) {
      sent.status = code;
      return this;
    },
    json: (body: unknown) => void (sent.body = body),
  };
  const request = { method, headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {} };
  const host = { switchToHttp: () => ({ getResponse: () => response, getRequest: () => request }) } as unknown as ArgumentsHost;
  new ErrorFilter().catch(exception, host);
  return sent;
}

const dropped = Object.assign(new Error('Reached the max retries per request limit (which is 3).'), { name: 'MaxRetriesPerRequestError' });

describe('503 unavailable', () => {
  it('a write without a key whose connection dropped may have been applied: no Retry-After, a message that says so', () => {
    const sent = reply(dropped, 'POST');
    expect(sent).toEqual({ status: 503, body: { error: { code: 'unavailable', message: expect.stringContaining('may have been applied') } }, headers: {} });
  });

  it('a read, or a write with an Idempotency-Key, may be sent again: Retry-After', () => {
    for (const sent of [reply(dropped, 'GET'), reply(dropped, 'POST', 'k-1')]) {
      expect(sent).toEqual({ status: 503, body: { error: { code: 'unavailable', message: expect.stringContaining('try again') } }, headers: { 'retry-after': '2' } });
    }
  });

  it('a script whose reply was lost, or a command unanswered past the timeout, is a 503 that may have been applied', () => {
    for (const error of [new ReplyLostError('evalsha'), new Error('Command timed out')]) {
      expect(reply(error, 'POST')).toEqual({ status: 503, body: { error: { code: 'unavailable', message: expect.stringContaining('may have been applied') } }, headers: {} });
      expect(reply(error, 'GET')).toMatchObject({ status: 503, headers: { 'retry-after': '2' } });
    }
  });

  it('any request refused before anything was done may be sent again as it is', () => {
    const sent = reply(new StoreUnavailableError({ notApplied: true }), 'POST');
    expect(sent).toEqual({ status: 503, body: { error: { code: 'unavailable', message: expect.stringContaining('try again') } }, headers: { 'retry-after': '2' } });
  });
});
