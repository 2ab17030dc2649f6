-- acquire-lease: take the right to advance a run (one advancer per run).
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] run inbox  KEYS[6] run's pending messages  KEYS[7] run log
-- ARGV[1..7] emit prologue (ARGV[3] owner: '' = read it from the run)  ARGV[8] lease token  ARGV[9] lease length (ms)
-- ARGV[10] the acquiring worker's id, kept in the run's `worker` field ('' = leave it)
-- ARGV[11] the first log entry to return (-1 = none)  ARGV[12] the job's wake number ('' = none)
-- Result: {'acquired', run hash as field/value pairs, pending messages, log entries from ARGV[11],
--   the worker whose lease ran out when this is a takeover ('?' if unrecorded; '' when no one held the run)}
--   | {'busy', ms until the current lease ends}
--   | {'idle', status, parent run id or ''}
--   'idle' = nothing to do: the run is waiting (its question is still open), ended, or gone.
-- A job numbered above the wake counter of a run that has not ended raises it to its number (raiseWakeTo).
-- The run (and the part of its log the worker lacks) comes back with the lease, so that the
-- worker's first round trip is this one. Leases are timed on Redis's clock (includes/clock.lua).
local leaseNowMs = redisClockMs()
local run = redis.call('HMGET', KEYS[4], 'status', 'owner', 'parentRunId', 'wake')
local status = run[1]
if not status then
  return {'idle', 'missing', ''}
end
if not isEnded(status) then
  raiseWakeTo(KEYS[4], ARGV[12], run[4] or '0')
end
if status == 'running' then
  local untilMs = tonumber(redis.call('HGET', KEYS[4], 'leaseUntil') or '0')
  if untilMs > leaseNowMs then
    return {'busy', tostring(untilMs - leaseNowMs)}
  end
elseif status ~= 'queued' then
  return {'idle', status, run[3] or ''}
end
if OWNER == '' then
  OWNER = run[2]
end
local takenFrom = status == 'running' and (redis.call('HGET', KEYS[4], 'worker') or '?') or ''
redis.call('HSET', KEYS[4], 'status', 'running', 'lease', ARGV[8], 'leaseUntil', leaseNowMs + tonumber(ARGV[9]), 'updatedAt', AT_MS)
if ARGV[10] and ARGV[10] ~= '' then
  redis.call('HSET', KEYS[4], 'worker', ARGV[10])
end
-- Every wake so far is already in the log, which the new advancer reads next.
redis.call('DEL', KEYS[5])
if status ~= 'running' then
  emitStatus('running', nil)
end
local from = tonumber(ARGV[11])
local log = from >= 0 and redis.call('LRANGE', KEYS[7], from, -1) or {}
return {'acquired', redis.call('HGETALL', KEYS[4]), redis.call('LLEN', KEYS[6]), log, takenFrom}
