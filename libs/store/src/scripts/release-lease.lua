-- release-lease: hand a run back without ending it (its worker is shutting down mid-run, or puts a
-- failed model call off); the next advancer takes it at once instead of waiting for the lease to run out.
-- KEYS[1..3] emit prologue  KEYS[4] run hash
-- ARGV[1..7] emit prologue  ARGV[8] lease token
-- Result: 'released' | 'lost' (the lease is someone else's: nothing changes)
--   | 'cancelled' (a stop was asked meanwhile: the run stays held, for its holder to end it now)
local blocked = blockedStep(KEYS[4], ARGV[8])
if blocked then
  return blocked
end
redis.call('HSET', KEYS[4], 'status', 'queued', 'updatedAt', AT_MS)
redis.call('HDEL', KEYS[4], 'lease', 'leaseUntil', 'worker')
emitStatus('queued', nil)
return 'released'
