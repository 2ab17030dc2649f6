-- webhook-delivery-attempt: records the outcome of one try (or a refusal without a try) on a delivery still pending.
-- KEYS[1] delivery record hash  KEYS[2] the delivery's attempts list
-- ARGV[1] attempt JSON ('' = no try was made: nothing is appended, the count stays)  ARGV[2] new status
-- ARGV[3] receiver's HTTP status ('' none)  ARGV[4] error ('' none)  ARGV[5] ISO time
-- ARGV[6] attempts kept  ARGV[7] retention (secs) once the status is final
-- Result: the attempt count, or -1 when the record is gone (trimmed from the log, or its endpoint deleted)
--   or no longer pending (settled meanwhile, e.g. given up by the log's cap): it is left as it is, but
--   a try that was under way when its delivery was given up and went through is recorded as delivered
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'pending' and not (status == 'failed' and ARGV[2] == 'delivered' and ARGV[1] ~= '') then
  return -1
end
local attempts = tonumber(redis.call('HGET', KEYS[1], 'attempts') or '0')
if ARGV[1] ~= '' then
  attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('LTRIM', KEYS[2], -tonumber(ARGV[6]), -1)
end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'updatedAt', ARGV[5])
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'lastStatus', ARGV[3])
else
  redis.call('HDEL', KEYS[1], 'lastStatus')
end
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'lastError', ARGV[4])
else
  redis.call('HDEL', KEYS[1], 'lastError')
end
if ARGV[2] == 'delivered' then
  redis.call('HSET', KEYS[1], 'deliveredAt', ARGV[5])
end
if ARGV[2] ~= 'pending' then
  redis.call('EXPIRE', KEYS[1], ARGV[7])
  redis.call('EXPIRE', KEYS[2], ARGV[7])
end
return attempts
