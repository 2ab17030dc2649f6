-- park: the run waits; it holds nothing from here on. New log entries (the question, and the model turn
-- that asked it when that turn goes straight to its question) are appended first, with their events.
-- For a question, approval or checkpoint the interaction is opened in the same step (stored, indexed, counted, its deadline filed, and
-- `interaction.opened` emitted), unless an earlier pass over the same question opened it already.
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] run inbox  KEYS[6] interaction hash (the run hash
-- when nothing is opened)  KEYS[7] tenant open-interaction index (zset of ids by deadline; none = after
-- every deadline, by open time)  KEYS[8] tenant open-approval index (zset of keys by deadline, scored as KEYS[7])  KEYS[9] run log
-- ARGV[1..7] emit prologue  ARGV[8] lease token  ARGV[9] wait reason  ARGV[10] pending id (interaction or child run)
-- ARGV[11] interaction.opened data JSON ('' = nothing to open)  ARGV[12] approval index score (epoch ms;
-- '' = not an approval)  ARGV[13] prompt kind  ARGV[14] deadline (epoch ms; '' = none)  ARGV[15] open index
-- score for no deadline (past every deadline)  ARGV[16] number N of log entries to append first (0: the question
-- is in the log already)  ARGV[17] number M of their events  ARGV[18 .. 17+N] entry JSON
-- ARGV[18+N .. 17+N+2M] pairs of event type, event data JSON  ARGV[18+N+2M ..] the interaction hash's fields and values
-- Published with `interaction.opened` (not stored): `wake`, the run's wake counter as it parks.
-- Result: {'parked', due time of a deadline timer job to schedule, or ''} | {'continue'} (a wake arrived
--   meanwhile: read the log again) | {'lost'} | {'cancelled'}
local blocked = blockedStep(KEYS[4], ARGV[8])
if blocked then
  return {blocked}
end
local entries, events = tonumber(ARGV[16]), tonumber(ARGV[17])
for i = 18, 17 + entries do
  redis.call('RPUSH', KEYS[9], ARGV[i])
end
for i = 18 + entries, 17 + entries + 2 * events, 2 do
  emit(ARGV[i], ARGV[i + 1])
end
local fields = 18 + entries + 2 * events
if redis.call('LLEN', KEYS[5]) > 0 then
  redis.call('DEL', KEYS[5])
  return {'continue'}
end
local timer = ''
if ARGV[11] ~= '' and redis.call('EXISTS', KEYS[6]) == 0 then
  redis.call('HSET', KEYS[6], unpack(ARGV, fields))
  redis.call('HINCRBY', GAUGES, 'open:' .. ARGV[13], 1)
  redis.call('ZADD', KEYS[7], ARGV[14] ~= '' and ARGV[14] or ARGV[15], ARGV[10])
  if ARGV[12] ~= '' then
    redis.call('ZADD', KEYS[8], ARGV[12], KEYS[6])
  end
  if ARGV[14] ~= '' then
    timer = armDeadline(tonumber(ARGV[14])) or ''
  end
  emit('interaction.opened', ARGV[11])
  -- The answer's job will be numbered one past the run's wake counter as it parks: a gateway sends
  -- that job right behind the answer's resolve (InteractionResolver).
  annotatePublished('wake', tonumber(redis.call('HGET', KEYS[4], 'wake') or '0'))
end
redis.call('HSET', KEYS[4], 'status', 'waiting', 'waitReason', ARGV[9], 'pendingInteractionId', ARGV[10], 'updatedAt', AT_MS)
redis.call('HDEL', KEYS[4], 'lease', 'leaseUntil', 'worker')
leaveInflight(RUN_ID, false)
countParked()
emitStatus('waiting', ARGV[9])
return {'parked', timer}
