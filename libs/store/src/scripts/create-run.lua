-- create-run: a new run, queued, with its task as the first log entry.
-- KEYS[1..3] emit prologue  KEYS[4] run hash  KEYS[5] tenant run index (zset)  KEYS[6] run log
-- ARGV[1..7] emit prologue  ARGV[8] agent  ARGV[9] task  ARGV[10] trigger  ARGV[11] task log entry JSON
-- ARGV[12] run.created event data JSON
-- Result: 0 (the wake counter of the first job), or -1 when the run id already exists.
if redis.call('EXISTS', KEYS[4]) == 1 then
  return -1
end
redis.call('HSET', KEYS[4], 'id', RUN_ID, 'tenant', TENANT, 'owner', OWNER, 'agent', ARGV[8], 'task', ARGV[9],
  'trigger', ARGV[10], 'status', 'queued', 'wake', 0, 'createdAt', AT, 'updatedAt', AT)
redis.call('ZADD', KEYS[5], NOW_MS, RUN_ID)
redis.call('RPUSH', KEYS[6], ARGV[11])
emit('run.created', ARGV[12])
emitStatus('queued', nil)
return 0
