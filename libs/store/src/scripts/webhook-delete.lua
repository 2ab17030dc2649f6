-- webhook-delete: removes an endpoint with its delivery log; its queued deliveries find it gone.
-- KEYS[1] the tenant's endpoints hash  KEYS[2] the endpoint's delivery log (zset of delivery ids)
-- KEYS[3] the endpoint's in-flight set  KEYS[4] the endpoint's health hash  KEYS[5] the endpoint's waiting set
-- ARGV[1] endpoint id  ARGV[2] key prefix of delivery records ("<tenant tag>:whd:")
-- Result: the endpoints left (>= 0), or -1 if there was no such endpoint
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  return -1
end
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  redis.call('DEL', ARGV[2] .. id, ARGV[2] .. id .. ':attempts')
end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5])
return redis.call('HLEN', KEYS[1])
