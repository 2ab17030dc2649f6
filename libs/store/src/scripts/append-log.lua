-- append-log: fenced append of one log entry (optional) and its events.
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] run log
-- ARGV[1..7] emit prologue  ARGV[8] lease token  ARGV[9] lease length (ms)  ARGV[10] entry JSON or ''
-- ARGV[11..] pairs of event type, event data JSON
-- Result: {'ok', log length} | {'lost'} (another advancer holds the run) | {'cancelled'} (a stop was asked)
if not holdsLease(KEYS[4], ARGV[8]) then
  return {'lost'}
end
if redis.call('HGET', KEYS[4], 'cancel') == '1' then
  return {'cancelled'}
end
redis.call('HSET', KEYS[4], 'leaseUntil', NOW_MS + tonumber(ARGV[9]))
local length = redis.call('LLEN', KEYS[5])
if ARGV[10] ~= '' then
  length = redis.call('RPUSH', KEYS[5], ARGV[10])
end
for i = 11, #ARGV, 2 do
  emit(ARGV[i], ARGV[i + 1])
end
return {'ok', length}
