-- webhook-create: adds a tenant's webhook endpoint, within the tenant's endpoint limit, and makes
-- sure the dispatchers' consumer group on the tenant's event stream starts no later than it.
-- KEYS[1] the tenant's endpoints hash  KEYS[2] the tenant's event sequence counter  KEYS[3] the tenant's event stream
-- ARGV[1] endpoint id  ARGV[2] endpoint JSON (an object without createdSeq)  ARGV[3] most endpoints
-- ARGV[4] consumer group name
-- Result: {'created', createdSeq} (the endpoint receives events with a greater seq) | {'limit', count}
local count = redis.call('HLEN', KEYS[1])
if count >= tonumber(ARGV[3]) then
  return {'limit', count}
end
-- Read in the same step as the write: an event is either before the endpoint or delivered to it.
local seq = redis.call('GET', KEYS[2]) or '0'
local created = redis.pcall('XGROUP', 'CREATE', KEYS[3], ARGV[4], '0-' .. seq, 'MKSTREAM')
if type(created) == 'table' and created.err and count == 0 then
  -- The group is left from earlier endpoints: skip what nobody subscribed to. Its position is never
  -- past seq (stream ids are 0-<seq>), so this only moves it forward.
  redis.call('XGROUP', 'SETID', KEYS[3], ARGV[4], '0-' .. seq)
end
redis.call('HSET', KEYS[1], ARGV[1], string.sub(ARGV[2], 1, -2) .. ',"createdSeq":' .. seq .. '}')
return {'created', seq}
