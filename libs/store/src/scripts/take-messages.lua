-- take-messages: fenced; moves every pending message of the run into its log (as user_message
-- entries, in the order they came), between inference calls.
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] run log  KEYS[6] run's pending messages
-- ARGV[1..7] emit prologue  ARGV[8] lease token
-- Result: {'ok', messages moved (JSON array of message JSON)} | {'lost'} | {'cancelled'}
local blocked = blockedStep(KEYS[4], ARGV[8])
if blocked then
  return {blocked}
end
local pending = redis.call('LRANGE', KEYS[6], 0, -1)
if #pending == 0 then
  return {'ok', '[]'}
end
local ids = {}
for i, raw in ipairs(pending) do
  local message = cjson.decode(raw)
  ids[i] = message.messageId
  redis.call('RPUSH', KEYS[5], cjson.encode({type = 'user_message', messageId = message.messageId, text = message.text,
    by = message.by, at = message.at}))
end
redis.call('DEL', KEYS[6])
emit('message.injected', cjson.encode({messageIds = ids}))
return {'ok', '[' .. table.concat(pending, ',') .. ']'}
