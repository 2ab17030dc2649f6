-- agent-enable: an operator enables the powers of exactly the current version of a tenant agent.
-- KEYS[1] tenant agents (hash: name -> record JSON with .digest)  KEYS[2] enabled versions (hash: digest -> JSON)
-- ARGV[1] name  ARGV[2] digest the operator reviewed  ARGV[3] enablement JSON ({ agent, enabledBy, enabledAt })
-- Result: {'enabled'} | {'already'} (kept as first enabled) | {'stale', current digest} | {'missing'}
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then
  return {'missing'}
end
local digest = cjson.decode(current).digest
if digest ~= ARGV[2] then
  return {'stale', digest}
end
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 0 then
  return {'already'}
end
return {'enabled'}
