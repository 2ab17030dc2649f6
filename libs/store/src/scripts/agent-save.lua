-- agent-save: makes a version the current one of a tenant agent, storing the version (immutable,
-- keyed by its digest) when it is new. The version it replaces joins the superseded set.
-- KEYS[1] tenant agents (hash: name -> record JSON with .digest)  KEYS[2] the version (string)
-- KEYS[3] superseded versions (zset, score = when superseded, epoch ms)
-- ARGV[1] name  ARGV[2] digest  ARGV[3] record JSON  ARGV[4] canonical definition JSON
-- ARGV[5] most agents of the tenant  ARGV[6] now (epoch ms)
-- Result: {'created'} | {'updated', previous digest} | {'unchanged'} | {'full', agent count}
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then
  local count = redis.call('HLEN', KEYS[1])
  if count >= tonumber(ARGV[5]) then
    return {'full', count}
  end
end
local previous = current and cjson.decode(current).digest or nil
if previous == ARGV[2] then
  return {'unchanged'}
end
redis.call('SET', KEYS[2], ARGV[4], 'NX')
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[2])
if previous then
  redis.call('ZADD', KEYS[3], ARGV[6], previous)
  return {'updated', previous}
end
return {'created'}
