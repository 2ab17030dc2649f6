import { decodeJwt } from 'jose';
import type { Socket } from 'socket.io';
import { UnauthenticatedError } from '@parley/contracts';

/** Longest setTimeout Node honours; a later expiry is checked again when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * When a socket signed in with `token` must be closed: the token's `exp` plus the clock-skew leeway
 * every token gets (an HTTP request with it is accepted until then too). Undefined: no `exp`. A
 * token already past it is refused here, as a reconnect after the close is: the verification's own
 * leeway ends at the same instant, and a socket accepted at that instant would be closed at once.
 * (The token was verified just before, so reading `exp` needs no second verification.)
 */
export function socketEndsAt(token: string | undefined, clockSkewSecs: number, now = Date.now()): number | undefined {
  const exp = token ? decodeJwt(token).exp : undefined;
  if (exp === undefined) {
    return undefined;
  }
  const endsAt = (exp + clockSkewSecs) * 1000;
  if (endsAt <= now) {
    throw new UnauthenticatedError('invalid token: token expired');
  }
  return endsAt;
}

/**
 * A socket lives no longer than the token it signed in with. Armed only once the socket is
 * connected: socket.io drops a socket refused at the handshake without a `disconnect`, and a timer
 * armed before would hold it until the token's expiry.
 */
export function closeAt(socket: Socket, endsAt: number | undefined): void {
  if (endsAt === undefined) {
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const left = endsAt - Date.now();
    timer = setTimeout(() => (left > MAX_TIMER_MS ? arm() : socket.disconnect(true)), Math.max(0, Math.min(left, MAX_TIMER_MS)));
    timer.unref();
  };
  socket.once('disconnect', () => clearTimeout(timer));
  arm();
}
