-- agent-delete: removes a tenant agent's name; its current version joins the superseded set (runs
-- that use it keep it until they end).
-- KEYS[1] tenant agents (hash: name -> record JSON with .digest)  KEYS[2] superseded versions (zset)
-- ARGV[1] name  ARGV[2] now (epoch ms)
-- Result: the digest of the version it was, or nil when there is no such agent
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then
  return nil
end
local digest = cjson.decode(current).digest
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], digest)
return digest
