-- acquire-lease: take the right to advance a run (one advancer per run).
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] run inbox
-- ARGV[1..7] emit prologue  ARGV[8] lease token  ARGV[9] lease length (ms)
-- ARGV[10] the acquiring worker's id, kept in the run's `worker` field ('' = leave it)
-- Result: {'acquired'} | {'busy', ms until the current lease ends} | {'idle', status}
--   'idle' = nothing to do: the run is waiting (its question is still open), ended, or gone.
local status = redis.call('HGET', KEYS[4], 'status')
if not status then
  return {'idle', 'missing'}
end
if status == 'running' then
  local untilMs = tonumber(redis.call('HGET', KEYS[4], 'leaseUntil') or '0')
  if untilMs > NOW_MS then
    return {'busy', tostring(untilMs - NOW_MS)}
  end
elseif status ~= 'queued' then
  return {'idle', status}
end
redis.call('HSET', KEYS[4], 'status', 'running', 'lease', ARGV[8], 'leaseUntil', NOW_MS + tonumber(ARGV[9]), 'updatedAt', AT)
if ARGV[10] and ARGV[10] ~= '' then
  redis.call('HSET', KEYS[4], 'worker', ARGV[10])
end
-- Every wake so far is already in the log, which the new advancer reads next.
redis.call('DEL', KEYS[5])
if status ~= 'running' then
  emitStatus('running', nil)
end
return {'acquired'}
