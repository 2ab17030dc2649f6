import { Logger } from '@nestjs/common';
import { ReplyLostError } from '@parley/platform';
import { RouteFailures, type Entry } from './webhook.poison';

describe('RouteFailures', () => {
  const entry: Entry = ['0-42', ['r', 'run-1', 't', 'run.finished']];
  const refused = new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
  const quiet = new Logger('test');
  beforeAll(() => Logger.overrideLogger(false));

  it('gives an entry up at its third failure with Redis answering, not before', () => {
    const failures = new RouteFailures(3, quiet);
    expect([1, 2, 3].map(() => failures.failed('acme', 's', entry, refused))).toEqual([false, false, true]);
    // Given up: counted afresh should it ever be read again.
    expect(failures.failed('acme', 's', entry, refused)).toBe(false);
  });

  it('counts nothing for Redis going away, and forgets an entry once routed', () => {
    const failures = new RouteFailures(2, quiet);
    const away = [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }), new Error('Connection is closed.'), new ReplyLostError('evalsha')];
    for (const error of [...away, ...away]) {
      expect(failures.failed('acme', 's', entry, error)).toBe(false);
    }
    expect(failures.failed('acme', 's', entry, refused)).toBe(false);
    failures.routed('s', entry[0]);
    expect(failures.failed('acme', 's', entry, refused)).toBe(false);
    expect(failures.failed('acme', 's', entry, refused)).toBe(true);
  });

  it('counts each entry of each stream on its own', () => {
    const failures = new RouteFailures(2, quiet);
    expect(failures.failed('acme', 's', entry, refused)).toBe(false);
    expect(failures.failed('acme', 'other', entry, refused)).toBe(false);
    expect(failures.failed('acme', 's', ['0-43', null], refused)).toBe(false);
    expect(failures.failed('acme', 's', entry, refused)).toBe(true);
  });
});
