-- agent-prune: drops superseded versions no run still needs: their definition, their run set and
-- their enablement. A run needs its version until it ends; ended runs leave the set here. The keys
-- built from the prefixes carry the tenant's hash tag (the same slot as KEYS), like admit-run.
-- KEYS[1] superseded versions (zset)  KEYS[2] enabled versions (hash: digest -> JSON)
-- ARGV[1] prefix of version keys (the digest follows; its run set adds ':runs')
-- ARGV[2] prefix of run hash keys (the run id follows)  ARGV[3] most versions looked at
-- Result: the number of versions dropped
local digests = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1)
local dropped = 0
for _, digest in ipairs(digests) do
  local runsKey = ARGV[1] .. digest .. ':runs'
  for _, id in ipairs(redis.call('SMEMBERS', runsKey)) do
    local status = redis.call('HGET', ARGV[2] .. id, 'status')
    if not status or status == 'finished' or status == 'failed' or status == 'cancelled' then
      redis.call('SREM', runsKey, id)
    end
  end
  if redis.call('SCARD', runsKey) == 0 then
    redis.call('DEL', ARGV[1] .. digest, runsKey)
    redis.call('ZREM', KEYS[1], digest)
    redis.call('HDEL', KEYS[2], digest)
    dropped = dropped + 1
  end
end
return dropped
