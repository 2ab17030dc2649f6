-- open-interaction: store a pending interaction (idempotent: keyed by Parley's interaction id).
-- KEYS[1..3] emit prologue  KEYS[4] interaction hash  KEYS[5] tenant open-interaction index (zset)
-- KEYS[6] run hash  KEYS[7] run's interaction index (zset)  KEYS[8] tenant open-approval index (zset by deadline)
-- ARGV[1..7] emit prologue  ARGV[8] interaction JSON (as opened)  ARGV[9] interaction.opened data JSON
-- ARGV[10] deadline score for the approval index (epoch ms; '' = not an approval)  ARGV[11] prompt kind
-- Result: 'created' | 'exists' | 'run_ended' (the run ended first; nothing is opened)
if redis.call('EXISTS', KEYS[4]) == 1 then
  return 'exists'
end
local runStatus = redis.call('HGET', KEYS[6], 'status')
if not runStatus or runStatus == 'finished' or runStatus == 'failed' or runStatus == 'cancelled' then
  return 'run_ended'
end
redis.call('HSET', KEYS[4], 'data', ARGV[8], 'status', 'open', 'runId', RUN_ID, 'kind', ARGV[11])
redis.call('HINCRBY', GAUGES, 'open:' .. ARGV[11], 1)
redis.call('ZADD', KEYS[5], NOW_MS, KEYS[4])
redis.call('ZADD', KEYS[7], NOW_MS, KEYS[4])
if ARGV[10] ~= '' then
  redis.call('ZADD', KEYS[8], ARGV[10], KEYS[4])
end
emit('interaction.opened', ARGV[9])
return 'created'
