-- rate-hit: one hit on a fixed-window per-tenant counter (runs or messages per minute).
-- KEYS[1] the window's counter
-- ARGV[1] most hits per window (> 0)  ARGV[2] window length (ms)
-- Result: 0 the hit is counted | ms until the window frees (the limit is reached: nothing is counted)
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[1]) then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    -- A counter without expiry (never left by this script): give it one so it cannot block forever.
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    ttl = tonumber(ARGV[2])
  end
  return math.max(ttl, 1)
end
if redis.call('INCR', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
