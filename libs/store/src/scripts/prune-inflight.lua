-- prune-inflight: takes runs out of the tenant's in-flight index that are no longer queued or
-- running (the sweeper found them so: their keys were lost otherwise). Checked again here, in one
-- step: a run that parked and was woken since the sweeper read it is in flight again and stays.
-- KEYS[1] tenant in-flight index (zset of run ids)
-- ARGV[1] prefix of the tenant's run hash keys (the run id follows; the tenant's hash tag, the slot
--   of KEYS[1])  ARGV[2..] run ids
-- Result: how many were removed
local removed = 0
for i = 2, #ARGV do
  local status = redis.call('HGET', ARGV[1] .. ARGV[i], 'status')
  if status ~= 'queued' and status ~= 'running' then
    removed = removed + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return removed
