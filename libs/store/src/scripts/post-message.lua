-- post-message: a person's message to a run. It waits in the run's message list until the worker
-- injects it between inference calls; it never answers an open question and wakes nothing.
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] run's pending messages (list)
-- KEYS[6] the run's keyed messages (hash: message id -> digest of its text; used only with ARGV[11])
-- ARGV[1..7] emit prologue  ARGV[8] message JSON ({messageId, text, by, at})  ARGV[9] message.received data JSON
-- ARGV[10] most messages that may wait at once
-- ARGV[11] digest of the text when the message id derives from an idempotency key, else ''  ARGV[12] message id
-- Result: {'accepted', pending count} | {'ended', status} (the run has ended: nothing is kept) | {'missing'}
--   | {'full', pending count} (nothing is kept) | {'replayed', pending count} (this key's message was
--   kept before: nothing more is) | {'conflict'} (this key was used for another text: nothing is kept)
local status = redis.call('HGET', KEYS[4], 'status')
if not status then
  return {'missing'}
end
local keyed = ARGV[11] ~= ''
if keyed then
  local recorded = redis.call('HGET', KEYS[6], ARGV[12])
  if recorded then
    return recorded == ARGV[11] and {'replayed', redis.call('LLEN', KEYS[5])} or {'conflict'}
  end
end
if isEnded(status) then
  return {'ended', status}
end
if redis.call('LLEN', KEYS[5]) >= tonumber(ARGV[10]) then
  return {'full', redis.call('LLEN', KEYS[5])}
end
if keyed then
  redis.call('HSET', KEYS[6], ARGV[12], ARGV[11])
end
local pending = redis.call('RPUSH', KEYS[5], ARGV[8])
emit('message.received', ARGV[9])
return {'accepted', pending}
