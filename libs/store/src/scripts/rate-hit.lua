-- rate-hit: one hit on fixed-window counters (messages per minute: the tenant's, and the sender's
-- within it), counted on every counter or on none.
-- KEYS[1..n] the windows' counters
-- ARGV[1] window length (ms)  ARGV[1 + i] most hits per window on KEYS[i] (0 = no limit: not counted)
-- Result: 0 the hit is counted | {i, ms}: nothing is counted; KEYS[i] is the full window that frees
--   last, in ms (a retry sooner would be refused again)
local refused, wait = 0, 0
for i = 1, #KEYS do
  local most = tonumber(ARGV[1 + i])
  if most > 0 and tonumber(redis.call('GET', KEYS[i]) or '0') >= most then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then
      -- A counter without expiry (never left by this script): give it one so it cannot block forever.
      redis.call('PEXPIRE', KEYS[i], ARGV[1])
      ttl = tonumber(ARGV[1])
    end
    if ttl >= wait then
      refused, wait = i, math.max(ttl, 1)
    end
  end
end
if refused > 0 then
  return {refused, wait}
end
for i = 1, #KEYS do
  if tonumber(ARGV[1 + i]) > 0 and redis.call('INCR', KEYS[i]) == 1 then
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
  end
end
return 0
