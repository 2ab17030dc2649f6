-- create-run: a new run, queued, with its task as the first log entry.
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] tenant run index (zset)  KEYS[6] run log
-- KEYS[7] the parent's children set (a sub-agent), else any key of this run (unused)
-- KEYS[8] the parent's hash (a sub-agent), else this run's hash (unused)
-- KEYS[9] the start's idempotency key record (RedisKeys.startKey), else this run's hash (unused)
-- ARGV[1..7] emit prologue  ARGV[8] agent  ARGV[9] task  ARGV[10] trigger  ARGV[11] task log entry JSON
-- ARGV[12] run.created event data JSON  ARGV[13] unattended ('1' | '0')  ARGV[14] parent run id ('' = none)
-- ARGV[15] first stage ('' = the agent has none)  ARGV[16] its stage log entry JSON ('' = none)
-- ARGV[17] the parent's lease token (a sub-agent: only the parent's current advancer may start it)
-- ARGV[18] a tenant agent's version digest ('' = a global agent)  ARGV[19] that version's key
-- ARGV[20] its run set  ARGV[21] prefix of this tenant's run hash keys (ARGV[19..21] share the
--   tenant's hash tag, the slot of KEYS)
-- ARGV[22] '1': the start has an idempotency key (KEYS[9]); '0': none
-- Result: 0 (the wake counter of the first job), -1 when the run id already exists, -2 when the
--   parent's lease was lost, -3 when the agent version is no longer stored, -4 when the idempotency
--   key names another run still kept (nothing is created)
if redis.call('EXISTS', KEYS[4]) == 1 then
  return -1
end
if ARGV[14] ~= '' and not holdsLease(KEYS[8], ARGV[17]) then
  return -2
end
if ARGV[18] ~= '' and redis.call('EXISTS', ARGV[19]) == 0 then
  return -3
end
if ARGV[22] == '1' then
  local holder = redis.call('GET', KEYS[9])
  if holder and redis.call('EXISTS', ARGV[21] .. holder) == 1 then
    return -4
  end
end
redis.call('HSET', KEYS[4], 'owner', OWNER, 'agent', ARGV[8], 'task', ARGV[9],
  'trigger', ARGV[10], 'unattended', ARGV[13], 'status', 'queued', 'wake', 0, 'createdAt', AT_MS, 'updatedAt', AT_MS)
if ARGV[14] ~= '' then
  redis.call('HSET', KEYS[4], 'parentRunId', ARGV[14])
  redis.call('SADD', KEYS[7], RUN_ID)
end
if ARGV[18] ~= '' then
  redis.call('HSET', KEYS[4], 'agentDigest', ARGV[18])
  -- The set keeps the version while a run needs it; ended runs met here leave it, so it stays small.
  for _, id in ipairs(redis.call('SRANDMEMBER', ARGV[20], 2)) do
    local status = redis.call('HGET', ARGV[21] .. id, 'status')
    if not status or status == 'finished' or status == 'failed' or status == 'cancelled' then
      redis.call('SREM', ARGV[20], id)
    end
  end
  redis.call('SADD', ARGV[20], RUN_ID)
end
if ARGV[22] == '1' then
  -- Kept as long as the run: closeRun gives it the run's retention.
  redis.call('SET', KEYS[9], RUN_ID)
  redis.call('HSET', KEYS[4], 'startKey', KEYS[9])
end
redis.call('ZADD', KEYS[5], NOW_MS, RUN_ID)
enterInflight(RUN_ID)
redis.call('RPUSH', KEYS[6], ARGV[11])
emit('run.created', ARGV[12])
if ARGV[15] ~= '' then
  redis.call('HSET', KEYS[4], 'stage', ARGV[15])
  redis.call('RPUSH', KEYS[6], ARGV[16])
  emit('stage.entered', '{"stage":' .. cjson.encode(ARGV[15]) .. ',"from":null}')
end
emitStatus('queued', nil)
return 0
