import { tenantOfMessage } from './event-channel.message';

describe('tenantOfMessage', () => {
  it("finds the tenant of the channel's messages, arrays of events or single events, and nothing in anything else", () => {
    expect(tenantOfMessage('[{"seq":12,"tenant":"acme","runId":"r"},{"seq":13,"tenant":"acme"}]')).toBe('acme');
    expect(tenantOfMessage('{"seq":12,"tenant":"globex","runId":"r"}')).toBe('globex');
    expect(tenantOfMessage('[{"tenant":"initech","seq":12}]')).toBe('initech');
    expect(tenantOfMessage('{"seq":12,"tenant":"a\\"b"}')).toBe('a"b');
    expect(tenantOfMessage('not json')).toBeUndefined();
    expect(tenantOfMessage('[]')).toBeUndefined();
    expect(tenantOfMessage('{"seq":1,"tenant":7}')).toBeUndefined();
  });
});
