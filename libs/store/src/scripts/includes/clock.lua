-- Redis's own clock, read at most once per script: the floor of event seqs (includes/emit.lua), the
-- lease clock and the clock deadlines are judged by (expire-due.lua).
local clockSeconds, clockMicros = nil, nil
local function redisTime()
  if not clockSeconds then
    local time = redis.call('TIME')
    clockSeconds, clockMicros = tonumber(time[1]), tonumber(time[2])
  end
  return clockSeconds, clockMicros
end

-- Leases are taken, extended and judged, and deadlines judged, in epoch ms of this clock, never of a
-- caller's: workers run on hosts whose clocks disagree, and on their own clocks one ahead by more than a lease would take
-- over a live lease (and run a model call or a command a second time), one behind would extend its
-- lease into the past. Redis 7 replicates a script's effects, so TIME may precede writes.
local function redisClockMs()
  local seconds, micros = redisTime()
  return seconds * 1000 + math.floor(micros / 1000)
end
