-- webhook-swap: replaces a stored endpoint only if it is still the one the caller read (update, rotation).
-- KEYS[1] the tenant's endpoints hash
-- ARGV[1] endpoint id  ARGV[2] endpoint JSON as read  ARGV[3] new endpoint JSON
-- Result: 'ok' | 'changed' (someone wrote it meanwhile: read again) | 'missing'
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then
  return 'missing'
end
if current ~= ARGV[2] then
  return 'changed'
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 'ok'
