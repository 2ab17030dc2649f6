-- webhook-slot-take: a slot to send one delivery to an endpoint now, unless the endpoint or its tenant
-- has too many deliveries in flight, or the endpoint is paused after failing many times in a row. Once
-- a pause is over, one try at a time finds out whether the endpoint is back.
-- KEYS[1] the endpoint's in-flight set (zset: delivery id -> when its slot lapses, epoch ms)  KEYS[2] the endpoint's health hash
-- KEYS[3] the endpoint's waiting set (zset: delivery id -> when it last found the endpoint busy, epoch ms)
-- KEYS[4] the tenant's in-flight set (zset, as KEYS[1], over all its endpoints)
-- ARGV[1] delivery id  ARGV[2] now (epoch ms; empty: Redis's clock)  ARGV[3] how long until the slot lapses unless given back first (a crashed sender's; ms)
-- ARGV[4] most deliveries in flight at once  ARGV[5] failures in a row after which the endpoint is paused
-- ARGV[6] how long a waiter counts without looking again (ms: it was given up or its endpoint deleted)
-- ARGV[7] most deliveries of the tenant in flight at once (0 = no bound)
-- Result: {'ok'} | {'paused', until (epoch ms), ms left until then} | {'busy', average duration of a try (ms), deliveries waiting, in flight at most now}
--   (the tenant's bound reached: {'busy', average duration of a try of the endpoint, 1, 1})
-- Redis's clock, not the caller's: a host whose clock runs ahead must not free other hosts' live slots.
local now = tonumber(ARGV[2])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local lapsesAt = now + tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
local health = redis.call('HMGET', KEYS[2], 'failures', 'pausedUntil', 'avgMs')
local pausedUntil = tonumber(health[2] or '0')
if pausedUntil > now then
  return {'paused', pausedUntil, pausedUntil - now}
end
local most = tonumber(health[1] or '0') >= tonumber(ARGV[5]) and 1 or tonumber(ARGV[4])
-- A delivery taking its slot again (its try was cut short) does not count against itself.
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= most then
  -- Waiters are counted so that they look again about when their turn could come, not all at once.
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[6]))
  redis.call('ZADD', KEYS[3], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
  return {'busy', tonumber(health[3] or '0'), redis.call('ZCARD', KEYS[3]), most}
end
-- One tenant's receivers that hang hold at most its share of the senders, not every sender of the
-- deployment. (Its waiters look again after about one try: the endpoint's own queue is not in the way.)
local tenantMost = tonumber(ARGV[7])
if tenantMost > 0 and not redis.call('ZSCORE', KEYS[4], ARGV[1]) and redis.call('ZCARD', KEYS[4]) >= tenantMost then
  return {'busy', tonumber(health[3] or '0'), 1, 1}
end
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[1], lapsesAt, ARGV[1])
redis.call('PEXPIREAT', KEYS[1], lapsesAt)
redis.call('ZADD', KEYS[4], lapsesAt, ARGV[1])
if redis.call('PTTL', KEYS[4]) < tonumber(ARGV[3]) then
  redis.call('PEXPIREAT', KEYS[4], lapsesAt)
end
return {'ok'}
