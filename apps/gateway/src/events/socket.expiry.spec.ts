import { UnauthenticatedError } from '@parley/contracts';
import { signToken } from '@parley/platform';
import { socketEndsAt } from './socket.expiry';

describe('when a socket must be closed', () => {
  const now = Date.now();
  const exp = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { exp: number }).exp;
  const token = signToken({ tenant: 'acme', sub: 'alice', role: 'member' }, 'secret', 60);

  it("is when the leeway past the token's exp ends, as for an HTTP request", () => {
    expect(socketEndsAt(token, 30, now)).toBe((exp(token) + 30) * 1000);
    expect(socketEndsAt(token, 0, now)).toBe(exp(token) * 1000);
    expect(socketEndsAt(undefined, 30, now)).toBeUndefined();
  });

  it('refuses a token the verification still accepted at the very end of its leeway (the socket would be cut at once)', () => {
    const endsAt = (exp(token) + 30) * 1000;
    expect(() => socketEndsAt(token, 30, endsAt)).toThrow(UnauthenticatedError);
    expect(() => socketEndsAt(token, 30, endsAt)).toThrow('invalid token: token expired');
    expect(socketEndsAt(token, 30, endsAt - 1)).toBe(endsAt);
  });
});
