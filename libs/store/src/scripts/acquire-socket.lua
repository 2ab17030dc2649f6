-- acquire-socket: a slot for one socket.io connection of a tenant, counted across gateways, in all
-- and per user. Members expire unless their gateway refreshes them, so a crashed gateway's sockets age out.
-- KEYS[1] tenant sockets (zset, member "<gateway>:<socket>\n<user digest>", score = expiry epoch ms)
-- ARGV[1] member  ARGV[2] now (epoch ms)  ARGV[3] expiry (epoch ms)  ARGV[4] most live sockets (> 0)
-- ARGV[5] the member's user part ("\n<user digest>")  ARGV[6] most live sockets of one user (0 = no limit)
-- Result: {1, live count with this one} | {0, live count, 'tenant' | 'user'} (a limit is reached: nothing is added)
local now = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
local live = redis.call('ZCOUNT', KEYS[1], now, '+inf')
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return {1, live}
end
if live >= tonumber(ARGV[4]) then
  return {0, live, 'tenant'}
end
-- The user's sockets among the tenant's: a scan of at most the tenant's limit, at connection time only.
local perUser = tonumber(ARGV[6])
if perUser > 0 then
  local mine = 0
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')) do
    if string.sub(member, -#ARGV[5]) == ARGV[5] then
      mine = mine + 1
    end
  end
  if mine >= perUser then
    return {0, mine, 'user'}
  end
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return {1, live + 1}
