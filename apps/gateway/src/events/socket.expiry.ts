import { decodeJwt } from 'jose';
import type { Socket } from 'socket.io';

/** Longest setTimeout Node honours; a later expiry is checked again when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A socket lives no longer than the token it signed in with: at the token's `exp` the gateway
 * closes it, and the client's reconnect with the same token is refused. (The token was verified
 * just before, so reading `exp` needs no second verification.)
 */
export function closeAtExpiry(socket: Socket, token: string | undefined): void {
  const exp = token ? decodeJwt(token).exp : undefined;
  if (exp === undefined) {
    return;
  }
  const arm = (): void => {
    const left = exp * 1000 - Date.now();
    const timer = setTimeout(() => (left > MAX_TIMER_MS ? arm() : socket.disconnect(true)), Math.max(0, Math.min(left, MAX_TIMER_MS)));
    timer.unref();
    socket.once('disconnect', () => clearTimeout(timer));
  };
  arm();
}
