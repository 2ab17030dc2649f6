-- park: the run waits for a person; it holds nothing from here on.
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] run inbox
-- ARGV[1..7] emit prologue  ARGV[8] lease token  ARGV[9] wait reason  ARGV[10] interaction id
-- Result: 'parked' | 'continue' (a wake arrived meanwhile: read the log again) | 'lost' | 'cancelled'
local blocked = blockedStep(KEYS[4], ARGV[8])
if blocked then
  return blocked
end
if redis.call('LLEN', KEYS[5]) > 0 then
  redis.call('DEL', KEYS[5])
  return 'continue'
end
redis.call('HSET', KEYS[4], 'status', 'waiting', 'waitReason', ARGV[9], 'pendingInteractionId', ARGV[10], 'updatedAt', AT)
redis.call('HDEL', KEYS[4], 'lease', 'leaseUntil')
countParked(KEYS[4])
emitStatus('waiting', ARGV[9])
return 'parked'
