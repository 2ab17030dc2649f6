-- webhook-delivery-create: records a delivery of one event to one endpoint, once.
-- KEYS[1] delivery record hash  KEYS[2] the endpoint's delivery log (zset)  KEYS[3] the tenant's endpoints hash
-- ARGV[1] delivery id  ARGV[2] endpoint id  ARGV[3] event id  ARGV[4] event type  ARGV[5] event seq
-- ARGV[6] run id  ARGV[7] payload (the exact JSON body to send)  ARGV[8] ISO time  ARGV[9] now (epoch ms)
-- ARGV[10] most deliveries kept per endpoint  ARGV[11] key prefix of delivery records  ARGV[12] replayed delivery id ('' none)
-- ARGV[13] retention of a finished record (secs)
-- Result: {'created', number of pending deliveries given up to stay within the log's size} | {'exists', status}
--   (a redelivered event: nothing written) | {'missing'} (no such endpoint)
-- The log keeps the newest ARGV[10]: older finished records go. An older one still pending (the endpoint
-- has been failing for that long) is not sent any more but recorded as failed, kept for the retention.
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 0 then
  return {'missing'}
end
local status = redis.call('HGET', KEYS[1], 'status')
if status then
  return {'exists', status}
end
redis.call('HSET', KEYS[1], 'webhookId', ARGV[2], 'eventId', ARGV[3], 'eventType', ARGV[4], 'seq', ARGV[5],
  'runId', ARGV[6], 'payload', ARGV[7], 'status', 'pending', 'attempts', 0, 'createdAt', ARGV[8], 'updatedAt', ARGV[8])
if ARGV[12] ~= '' then
  redis.call('HSET', KEYS[1], 'replayOf', ARGV[12])
end
redis.call('ZADD', KEYS[2], tonumber(ARGV[9]), ARGV[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[10])
local givenUp = 0
if over > 0 then
  local dropped = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #dropped, 2 do
    local record = ARGV[11] .. dropped[i]
    if redis.call('HGET', record, 'status') == 'pending' then
      redis.call('HSET', record, 'status', 'failed', 'updatedAt', ARGV[8],
        'lastError', 'given up: over ' .. ARGV[10] .. ' newer deliveries to this endpoint while it was still being retried')
      redis.call('EXPIRE', record, ARGV[13])
      redis.call('EXPIRE', record .. ':attempts', ARGV[13])
      givenUp = givenUp + 1
    else
      redis.call('DEL', record, record .. ':attempts')
    end
  end
end
return {'created', givenUp}
