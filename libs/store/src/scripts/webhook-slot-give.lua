-- webhook-slot-give: gives back a delivery's slot after its try and keeps the endpoint's health: an
-- answer (a 2xx, or a refusal for good) clears its failures; no answer, a 5xx, 408 or 429 adds one, and
-- once they reach the threshold the endpoint is paused, for longer each further failure in a row.
-- KEYS[1] the endpoint's in-flight set  KEYS[2] the endpoint's health hash  KEYS[3] the tenant's in-flight set
-- ARGV[1] delivery id  ARGV[2] now (epoch ms; empty: Redis's clock, as webhook-slot-take)  ARGV[3] 'answered' | 'failed'  ARGV[4] the try's duration (ms)
-- ARGV[5] failures in a row after which the endpoint is paused  ARGV[6] first pause (ms)  ARGV[7] longest pause (ms)
-- ARGV[8] how long the health is kept once the endpoint is quiet (secs)
-- Result: {failures in a row, paused until (epoch ms; 0 = not paused by this try)}
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
local duration = tonumber(ARGV[4])
local average = tonumber(redis.call('HGET', KEYS[2], 'avgMs') or duration)
redis.call('HSET', KEYS[2], 'avgMs', math.floor((average * 7 + duration) / 8))
redis.call('EXPIRE', KEYS[2], ARGV[8])
if ARGV[3] == 'answered' then
  redis.call('HDEL', KEYS[2], 'failures', 'pausedUntil')
  return {0, 0}
end
local failures = redis.call('HINCRBY', KEYS[2], 'failures', 1)
local threshold = tonumber(ARGV[5])
if failures < threshold then
  return {failures, 0}
end
local pause = math.min(tonumber(ARGV[7]), tonumber(ARGV[6]) * 2 ^ math.min(failures - threshold, 30))
local now = tonumber(ARGV[2])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local pausedUntil = now + pause
redis.call('HSET', KEYS[2], 'pausedUntil', pausedUntil)
return {failures, pausedUntil}
