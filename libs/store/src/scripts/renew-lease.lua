-- renew-lease: extend the caller's lease.
-- KEYS[1] run hash
-- ARGV[1] lease token  ARGV[2] lease length (ms), from now on Redis's clock
-- Result: 1 renewed, 2 renewed and a stop was asked (the holder ends the run at its next step; what
--   it waits on meanwhile, a model call, may be given up), 0 the lease is someone else's (the caller must stop).
if redis.call('HGET', KEYS[1], 'lease') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'leaseUntil', redisClockMs() + tonumber(ARGV[2]))
if redis.call('HEXISTS', KEYS[1], 'cancel') == 1 then
  return 2
end
return 1
