-- post-message: a person's message to a run. It waits in the run's message list until the worker
-- injects it between inference calls; it never answers an open question and wakes nothing.
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] run's pending messages (list)
-- ARGV[1..7] emit prologue  ARGV[8] message JSON ({messageId, text, by, at})  ARGV[9] message.received data JSON
-- ARGV[10] most messages that may wait at once
-- Result: {'accepted', pending count} | {'ended', status} (the run has ended: nothing is kept) | {'missing'}
--   | {'full', pending count} (nothing is kept)
local status = redis.call('HGET', KEYS[4], 'status')
if not status then
  return {'missing'}
end
if isEnded(status) then
  return {'ended', status}
end
if redis.call('LLEN', KEYS[5]) >= tonumber(ARGV[10]) then
  return {'full', redis.call('LLEN', KEYS[5])}
end
local pending = redis.call('RPUSH', KEYS[5], ARGV[8])
emit('message.received', ARGV[9])
return {'accepted', pending}
