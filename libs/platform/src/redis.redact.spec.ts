import { redactUrl } from './redis';

describe('redactUrl', () => {
  it('hides a password, keeps the rest, and leaves what is not a URL alone', () => {
    expect(redactUrl('redis://:s3cret@127.0.0.1:6379/2')).toBe('redis://:***@127.0.0.1:6379/2');
    expect(redactUrl('rediss://app:s3cret@cache.internal:6380')).toBe('rediss://app:***@cache.internal:6380');
    expect(redactUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(redactUrl('redis://127.0.0.1:6379/0?password=s3cret&db=1')).toBe('redis://127.0.0.1:6379/0?password=***&db=1');
    expect(redactUrl('not a url')).toBe('not a url');
  });
});
