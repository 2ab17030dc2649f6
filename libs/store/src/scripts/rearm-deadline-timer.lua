-- rearm-deadline-timer: after a timer job has expired what was due, point the tenant's deadline timer
-- at the earliest deadline still open (the caller schedules a timer job for it), or clear it.
-- KEYS[1] tenant open-interaction index (zset: interaction id by deadline, epoch ms)  KEYS[2] tenant deadline timer
-- ARGV[1] the score of "no deadline" (open interactions without one score from there on)
-- Result: the due time (epoch ms) of the timer job to schedule, or false when no deadline is open
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first == 0 or tonumber(first[2]) >= tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[2])
  return false
end
redis.call('SET', KEYS[2], first[2])
return tonumber(first[2])
