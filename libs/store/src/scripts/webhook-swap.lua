-- webhook-swap: replaces a stored endpoint only if it is still the one the caller read (update, rotation).
-- KEYS[1] the tenant's endpoints hash  KEYS[2] the endpoint's health hash
-- ARGV[1] endpoint id  ARGV[2] endpoint JSON as read  ARGV[3] new endpoint JSON
-- ARGV[4] '1' to forget the endpoint's failures and pause (a new address, or turned back on)
-- Result: 'ok' | 'changed' (someone wrote it meanwhile: read again) | 'missing'
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then
  return 'missing'
end
if current ~= ARGV[2] then
  return 'changed'
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
if ARGV[4] == '1' then
  redis.call('DEL', KEYS[2])
end
return 'ok'
