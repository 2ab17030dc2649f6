-- rate-hit: one hit on fixed-window counters (messages per minute: the tenant's, and the sender's
-- within it), counted on every counter or on none.
-- KEYS[1..n] the windows' counters
-- ARGV[1] window length (ms)  ARGV[1 + i] most hits per window on KEYS[i] (0 = no limit: not counted)
-- Result: 0 the hit is counted | {i, ms until KEYS[i]'s window frees}: KEYS[i] is at its limit, nothing is counted
for i = 1, #KEYS do
  local most = tonumber(ARGV[1 + i])
  if most > 0 and tonumber(redis.call('GET', KEYS[i]) or '0') >= most then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then
      -- A counter without expiry (never left by this script): give it one so it cannot block forever.
      redis.call('PEXPIRE', KEYS[i], ARGV[1])
      ttl = tonumber(ARGV[1])
    end
    return {i, math.max(ttl, 1)}
  end
end
for i = 1, #KEYS do
  if tonumber(ARGV[1 + i]) > 0 and redis.call('INCR', KEYS[i]) == 1 then
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
  end
end
return 0
