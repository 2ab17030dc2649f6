-- end-run: the run reaches a terminal status; its keys get the retention period.
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] run grants (deleted: grants end with the run)
-- KEYS[6..9] the parent's hash, log, inbox, event stream (a sub-agent; else any keys of this run, unused)
-- KEYS[10..] the run's other keys (RedisKeys.runOwned: log, inbox, workspace, effects, messages, ...), to expire;
--   messages still pending are dropped with a message.discarded event
-- ARGV[1..7] emit prologue  ARGV[8] lease token ('' = unfenced: only a run nobody advances, i.e. not
--   parked and not held under a live lease, is ended; otherwise {'lost'})
-- ARGV[9] status  ARGV[10] end reason  ARGV[11] summary or error text ('' = none)
-- ARGV[12] terminal event type  ARGV[13] its data JSON  ARGV[14] retention (s)
-- ARGV[15] parent run id ('' = none)  ARGV[16] child_result entry JSON for the parent's log
-- ARGV[17] unfenced only: the wake counter of the job that gave up ('' = any); a run woken since
--   belongs to a later job: {'lost'}; one whose counter is below it has it raised (raiseWakeTo)
-- Result: {'ended', parent's wake counter or -1} | {'lost'} | {'already'} (the run had already ended)
--   | {'stop'} (fenced: a stop was asked meanwhile; the caller stops the run instead)
local status = redis.call('HGET', KEYS[4], 'status')
if isEnded(status) then
  return {'already'}
end
if ARGV[8] ~= '' and not holdsLease(KEYS[4], ARGV[8]) then
  return {'lost'}
end
if ARGV[8] == '' and (status == 'waiting'
    or (status == 'running' and tonumber(redis.call('HGET', KEYS[4], 'leaseUntil') or '0') > redisClockMs())
    or (ARGV[17] ~= '' and (redis.call('HGET', KEYS[4], 'wake') or '0') ~= ARGV[17])) then
  raiseWakeTo(KEYS[4], ARGV[17])
  return {'lost'}
end
if ARGV[8] ~= '' and redis.call('HGET', KEYS[4], 'cancel') == '1' then
  return {'stop'}
end
-- Before any other write: should it fail, nothing is half done.
discardMessages(10)
redis.call('HSET', KEYS[4], 'status', ARGV[9], 'endReason', ARGV[10], 'updatedAt', AT_MS)
if ARGV[11] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[9] == 'finished' and 'summary' or 'error', ARGV[11])
end
redis.call('HDEL', KEYS[4], 'lease', 'leaseUntil', 'waitReason', 'pendingInteractionId', 'cancel', 'cancelBy')
emitStatus(ARGV[9], nil)
emit(ARGV[12], ARGV[13])
return {'ended', closeRun(KEYS[5], 10, ARGV[14], {KEYS[6], KEYS[7], KEYS[8], KEYS[9]}, ARGV[15], ARGV[16])}
