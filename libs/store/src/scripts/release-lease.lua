-- release-lease: hand a run back without ending it (its worker is shutting down mid-run); the
-- next advancer takes it at once instead of waiting for the lease to run out.
-- KEYS[1..3] emit prologue  KEYS[4] run hash
-- ARGV[1..7] emit prologue  ARGV[8] lease token
-- Result: 'released' | 'lost' (the lease is someone else's: nothing changes)
if not holdsLease(KEYS[4], ARGV[8]) then
  return 'lost'
end
-- A stop asked meanwhile stays on the run (the cancel flag): the next advancer ends it.
redis.call('HSET', KEYS[4], 'status', 'queued', 'updatedAt', AT_MS)
redis.call('HDEL', KEYS[4], 'lease', 'leaseUntil', 'worker')
emitStatus('queued', nil)
return 'released'
