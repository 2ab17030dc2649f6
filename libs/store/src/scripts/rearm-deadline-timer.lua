-- rearm-deadline-timer: after a timer job has expired what was due, point the tenant's deadline timer
-- at the earliest deadline still filed (the caller schedules a timer job for it), or clear it.
-- KEYS[1] tenant deadlines (zset: interaction id by deadline, epoch ms)  KEYS[2] tenant deadline timer (string)
-- Result: the due time (epoch ms) of the timer job to schedule, or false when no deadline is filed
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first == 0 then
  redis.call('DEL', KEYS[2])
  return false
end
redis.call('SET', KEYS[2], first[2])
return tonumber(first[2])
