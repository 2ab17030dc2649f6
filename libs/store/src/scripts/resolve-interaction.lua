-- resolve-interaction: the one step that decides an interaction (answer, deadline or cancel),
-- records the answer in the run's log keyed by the interaction id, writes the grants an approval
-- gave, and wakes the run (a run that has ended gets none of that: only the decision and its event).
-- KEYS[1..3] emit prologue  KEYS[4] interaction hash  KEYS[5] tenant open-interaction index (ids)
-- KEYS[6] run hash  KEYS[7] run log  KEYS[8] run inbox  KEYS[9] tenant open-approval index
-- KEYS[10] run grants (set)
-- ARGV[1..7] emit prologue  ARGV[8] outcome  ARGV[9] answer JSON or ''  ARGV[10] resolver (actor JSON)
-- ARGV[11] answer log entry JSON  ARGV[12] interaction.resolved data JSON  ARGV[13] retention (s)
-- ARGV[14] resolver subject ('' = a deadline or the system: claims do not bind them)
-- ARGV[15..] grant members to add to the run's grants
-- Result: {'resolved', wake counter or -1} | {'conflict', status, resolvedAt, resolvedBy JSON}
--   | {'claimed', subject, until ms} (someone else holds a live claim) | {'missing'}
local current = redis.call('HMGET', KEYS[4], 'status', 'runId', 'resolvedAt', 'resolvedBy', 'claimSubject', 'claimUntil')
if not current[1] or current[2] ~= RUN_ID then
  return {'missing'}
end
if current[1] ~= 'open' then
  return {'conflict', current[1], current[3] or '', current[4] or ''}
end
if ARGV[14] ~= '' and current[5] and current[5] ~= ARGV[14] and tonumber(current[6]) > NOW_MS then
  return {'claimed', current[5], current[6]}
end
redis.call('HSET', KEYS[4], 'status', ARGV[8], 'resolvedAt', AT_MS, 'resolvedBy', ARGV[10])
redis.call('HDEL', KEYS[4], 'claimSubject', 'claimUntil')
if ARGV[9] ~= '' then
  redis.call('HSET', KEYS[4], 'answer', ARGV[9])
end
redis.call('ZREM', KEYS[5], string.match(KEYS[4], '[^:]+$'))
redis.call('ZREM', KEYS[9], KEYS[4])
countClosed(KEYS[4])
redis.call('EXPIRE', KEYS[4], ARGV[13])
local runStatus = redis.call('HGET', KEYS[6], 'status')
local runLive = runStatus and runStatus ~= 'finished' and runStatus ~= 'failed' and runStatus ~= 'cancelled'
-- Grants belong to a live run: an approval answered after its run ended leaves nothing behind.
if #ARGV >= 15 and runLive then
  redis.call('SADD', KEYS[10], unpack(ARGV, 15))
end
-- A run that ended (or is gone after its retention) gets no answer entry and no wake: they would
-- recreate its keys without a TTL (as in expire-due).
if not runLive then
  -- The event joins the run's history only while that is kept (appending keeps its expiry).
  emitFor(redis.call('EXISTS', KEYS[3]) == 1 and KEYS[3] or nil, RUN_ID, OWNER, 'interaction.resolved', ARGV[12])
  return {'resolved', -1}
end
redis.call('RPUSH', KEYS[7], ARGV[11])
emit('interaction.resolved', ARGV[12])
return {'resolved', wake(KEYS[6], KEYS[8], 'answer')}
