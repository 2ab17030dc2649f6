-- agent-revoke: an operator revokes the powers of every enabled version of a tenant agent.
-- KEYS[1] enabled versions (hash: digest -> JSON with .agent)
-- ARGV[1] agent name
-- Result: the number of versions revoked
local all = redis.call('HGETALL', KEYS[1])
local revoked = 0
for i = 1, #all, 2 do
  if cjson.decode(all[i + 1]).agent == ARGV[1] then
    redis.call('HDEL', KEYS[1], all[i])
    revoked = revoked + 1
  end
end
return revoked
