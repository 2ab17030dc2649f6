-- cancel-run: stop a run. A run nobody advances ends at once (its open interaction is cancelled in
-- the same step); a run a worker holds is flagged, and that worker ends it at its next step.
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] run inbox  KEYS[6] open interaction hash (or the
-- run hash when none)  KEYS[7] tenant open-interaction index (ids)  KEYS[8] run log  KEYS[9] tenant open-approval index
-- KEYS[10] run grants (deleted: grants end with the run)
-- KEYS[11..14] the parent's hash, log, inbox, event stream (a sub-agent; else any keys of this run, unused)
-- KEYS[15..] the run's other keys (RedisKeys.runOwned), to expire; pending messages are dropped (message.discarded)
-- ARGV[1..7] emit prologue  ARGV[8] who (actor JSON)  ARGV[9] expected open interaction id ('' = none)
-- ARGV[10] 'cancelled' answer log entry JSON  ARGV[11] interaction.resolved data JSON
-- ARGV[12] run.cancelled data JSON  ARGV[13] retention (s)  ARGV[14] lease token of the caller ('' = a client)
-- ARGV[15] parent run id ('' = none)  ARGV[16] child_result entry JSON for the parent's log
-- Result: {'cancelled', parent's wake counter or -1} | {'requested'} | {'already', status} | {'stale'} (the open
--   interaction changed: retry)
local run = redis.call('HMGET', KEYS[4], 'status', 'lease', 'pendingInteractionId')
local status = run[1]
if not status then
  return {'already', 'missing'}
end
if status == 'finished' or status == 'failed' or status == 'cancelled' then
  return {'already', status}
end
if status == 'running' and (ARGV[14] == '' or ARGV[14] ~= run[2]) then
  -- Said once, by the first stop asked: a stop asked again changes nothing a client sees.
  if redis.call('HSETNX', KEYS[4], 'cancel', '1') == 1 then
    redis.call('HSET', KEYS[4], 'cancelBy', ARGV[8])
    emit('run.stop_requested', '{"by":' .. ARGV[8] .. '}')
  end
  redis.call('RPUSH', KEYS[5], 'cancel')
  return {'requested'}
end
if status == 'waiting' and (run[3] or '') ~= ARGV[9] then
  return {'stale'}
end
-- Before any other write: should it fail, nothing is half done.
discardMessages(15)
if ARGV[9] ~= '' and redis.call('HGET', KEYS[6], 'status') == 'open' then
  redis.call('HSET', KEYS[6], 'status', 'cancelled', 'resolvedAt', AT_MS, 'resolvedBy', ARGV[8])
  redis.call('HDEL', KEYS[6], 'claimSubject', 'claimUntil')
  redis.call('ZREM', KEYS[7], ARGV[9])
  redis.call('ZREM', KEYS[9], KEYS[6])
  countClosed(KEYS[6])
  redis.call('RPUSH', KEYS[8], ARGV[10])
  emit('interaction.resolved', ARGV[11])
  redis.call('EXPIRE', KEYS[6], ARGV[13])
end
if status == 'waiting' then
  countUnparked()
end
redis.call('HSET', KEYS[4], 'status', 'cancelled', 'endReason', 'cancelled', 'stoppedBy', ARGV[8], 'updatedAt', AT_MS)
redis.call('HDEL', KEYS[4], 'lease', 'leaseUntil', 'waitReason', 'pendingInteractionId', 'cancel', 'cancelBy')
emitStatus('cancelled', nil)
emit('run.cancelled', ARGV[12])
return {'cancelled', closeRun(KEYS[10], 15, ARGV[13], {KEYS[11], KEYS[12], KEYS[13], KEYS[14]}, ARGV[15], ARGV[16])}
