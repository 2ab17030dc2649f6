-- Shared prologue of every script that changes state. Each such script takes the same first
-- three KEYS and first seven ARGV, so that a state change and its event are one atomic step:
--   KEYS[1] tenant sequence counter   KEYS[2] tenant event stream   KEYS[3] run event stream
--   ARGV[1] tenant  ARGV[2] run id  ARGV[3] run owner  ARGV[4] ISO time  ARGV[5] stream MAXLEN
--   ARGV[6] fan-out channel  ARGV[7] now (epoch ms)
local TENANT, RUN_ID, OWNER, AT = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local MAXLEN, CHANNEL, NOW_MS = ARGV[5], ARGV[6], tonumber(ARGV[7])

-- Appends one event (type + JSON data) with the tenant's next sequence number; returns the number.
local function emit(eventType, dataJson)
  local seq = redis.call('INCR', KEYS[1])
  local json = '{"seq":' .. seq .. ',"tenant":' .. cjson.encode(TENANT) .. ',"runId":' .. cjson.encode(RUN_ID) ..
    ',"owner":' .. cjson.encode(OWNER) .. ',"at":' .. cjson.encode(AT) .. ',"type":' .. cjson.encode(eventType) ..
    ',"data":' .. dataJson .. '}'
  local id = '0-' .. seq
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', MAXLEN, id, 'e', json)
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', MAXLEN, id, 'e', json)
  redis.call('PUBLISH', CHANNEL, json)
  return seq
end

local function emitStatus(status, waitReason)
  if waitReason then
    return emit('run.status', '{"status":"' .. status .. '","waitReason":"' .. waitReason .. '"}')
  end
  return emit('run.status', '{"status":"' .. status .. '"}')
end

-- Fencing: true when the caller still holds the run's lease.
local function holdsLease(runKey, token)
  return redis.call('HGET', runKey, 'lease') == token
end

-- Wake: notify the run; a waiting run becomes queued and the caller must enqueue job `wake`.
-- Returns the new wake counter, or -1 when the run is not waiting (its advancer will see the inbox).
local function wake(runKey, inboxKey, item)
  redis.call('RPUSH', inboxKey, item)
  if redis.call('HGET', runKey, 'status') ~= 'waiting' then
    return -1
  end
  local n = redis.call('HINCRBY', runKey, 'wake', 1)
  redis.call('HSET', runKey, 'status', 'queued', 'updatedAt', AT)
  redis.call('HDEL', runKey, 'waitReason', 'pendingInteractionId')
  emitStatus('queued', nil)
  return n
end
