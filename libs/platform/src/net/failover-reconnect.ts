/**
 * Replies of a Redis that is not, or no longer, the primary, to a command it did not run. After a
 * failover behind one address (a managed Redis's endpoint, a DNS name), a connection still open to
 * the old primary, now a replica, gets READONLY for every write and UNBLOCKED for a blocking read
 * (a BullMQ worker's) for as long as it stays open; LOADING comes from a primary still reading its
 * data back, MASTERDOWN from a replica whose primary is gone.
 */
const NOT_PRIMARY = /^(READONLY|LOADING|MASTERDOWN|UNBLOCKED) /;

export function isNotPrimaryReply(error: Error): boolean {
  return NOT_PRIMARY.test(error.message);
}

/** For ioredis' reconnectOnError: reconnect, failing the command (1), or sending it again once connected (2). */
export type ReconnectAnswer = false | 1 | 2;

/** How long after the first such reply of a failover its refused commands are sent again. */
const RESEND_FOR_MS = 3000;
/** A failover is over once no such reply came for this long; the next one starts another. */
const QUIET_MS = 10_000;

/**
 * ioredis' reconnectOnError for one connection: on a reply of {@link NOT_PRIMARY}, the connection
 * reconnects, reaching whatever the address reaches now, and sends the refused command again. Only
 * for the first seconds of a failover: should the address keep reaching a replica (REDIS_URL names
 * one), commands fail with the reply instead of going round for ever.
 */
export function failoverReconnect(onReply: (error: Error) => void, now: () => number = Date.now): (error: Error) => ReconnectAnswer {
  let failover: { since: number; last: number } | undefined;
  return (error) => {
    if (!isNotPrimaryReply(error)) {
      return false;
    }
    onReply(error);
    const at = now();
    if (!failover || at - failover.last > QUIET_MS) {
      failover = { since: at, last: at };
    }
    failover.last = at;
    return at - failover.since <= RESEND_FOR_MS ? 2 : 1;
  };
}
