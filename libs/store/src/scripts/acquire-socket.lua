-- acquire-socket: a slot for one socket.io connection of a tenant, counted across gateways.
-- Members expire unless their gateway refreshes them, so a crashed gateway's sockets age out.
-- KEYS[1] tenant sockets (zset, member "<gateway>:<socket>", score = expiry epoch ms)
-- ARGV[1] member  ARGV[2] now (epoch ms)  ARGV[3] expiry (epoch ms)  ARGV[4] most live sockets (> 0)
-- Result: {1, live count with this one} | {0, live count} (the limit is reached: nothing is added)
local now = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
local live = redis.call('ZCOUNT', KEYS[1], now, '+inf')
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return {1, live}
end
if live >= tonumber(ARGV[4]) then
  return {0, live}
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return {1, live + 1}
