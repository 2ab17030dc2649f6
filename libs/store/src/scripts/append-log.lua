-- append-log: fenced append of log entries and their events; optionally moves the run to a stage
-- in the same step (the call that left a stage and the stage move are never split).
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] run log
-- ARGV[1..7] emit prologue  ARGV[8] lease token  ARGV[9] lease length (ms)  ARGV[10] stage to enter ('' = none)
-- ARGV[11] '1' when the entries record what already happened (a tool call that ran): appended even
--   after a stop was asked, whose answer then says so
-- ARGV[12] number of entries N  ARGV[13 .. 12+N] entry JSON  ARGV[13+N ..] pairs of event type, event data JSON
-- Result: {'ok', log length, SHA-1 (hex) of the entry before the appended ones, nil when none or
--   when no entry was appended}
--   | {'lost'} (another advancer holds the run) | {'cancelled'} (a stop was asked; nothing appended)
--   | {'cancelled', log length, SHA-1} (a stop was asked; the record of what happened appended)
local blocked = blockedStep(KEYS[4], ARGV[8])
if blocked and not (blocked == 'cancelled' and ARGV[11] == '1') then
  return {blocked}
end
redis.call('HSET', KEYS[4], 'leaseUntil', redisClockMs() + tonumber(ARGV[9]))
local length = redis.call('LLEN', KEYS[5])
local entries = tonumber(ARGV[12])
-- Only an append of entries needs it (events alone, e.g. streamed deltas, come every few ms).
local previous = entries > 0 and length > 0 and redis.sha1hex(redis.call('LINDEX', KEYS[5], length - 1))
for i = 13, 12 + entries do
  length = redis.call('RPUSH', KEYS[5], ARGV[i])
end
if ARGV[10] ~= '' and not blocked then
  redis.call('HSET', KEYS[4], 'stage', ARGV[10])
end
for i = 13 + entries, #ARGV, 2 do
  emit(ARGV[i], ARGV[i + 1])
end
return {blocked or 'ok', length, previous}
