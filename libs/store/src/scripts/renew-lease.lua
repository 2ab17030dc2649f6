-- renew-lease: extend the caller's lease.
-- KEYS[1] run hash
-- ARGV[1] lease token  ARGV[2] lease length (ms), from now on Redis's clock
-- Result: 1 renewed, 0 the lease is someone else's (the caller must stop).
if redis.call('HGET', KEYS[1], 'lease') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'leaseUntil', redisClockMs() + tonumber(ARGV[2]))
return 1
