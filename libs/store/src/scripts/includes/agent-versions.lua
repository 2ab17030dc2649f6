-- A tenant agent's versions (agent-save, agent-prune): "<tenant tag>agent:<digest>" and its ":runs"
-- (tenantTag: "<prefix>:{t:<tenant>}:", as the emit prologue's TENANT_TAG).
-- A run that ends leaves its version's run set; a superseded version (replaced or deleted) whose last
-- run that was goes with it, as agent-prune would drop it, instead of waiting for the tenant's next
-- change of its agents. Up to two other members that ended are cleaned as create-run does (runs an
-- older release ended without leaving the set).
local function leaveAgentVersion(tenantTag, runKey, runId)
  local digest = redis.call('HGET', runKey, 'agentDigest')
  if not digest then
    return
  end
  local versionKey = tenantTag .. 'agent:' .. digest
  local runsKey = versionKey .. ':runs'
  redis.call('SREM', runsKey, runId)
  local superseded = tenantTag .. 'agents:superseded'
  if not redis.call('ZSCORE', superseded, digest) then
    return
  end
  for _, id in ipairs(redis.call('SRANDMEMBER', runsKey, 2)) do
    local status = redis.call('HGET', string.sub(runKey, 1, -1 - #runId) .. id, 'status')
    if not status or status == 'finished' or status == 'failed' or status == 'cancelled' then
      redis.call('SREM', runsKey, id)
    end
  end
  if redis.call('SCARD', runsKey) == 0 then
    redis.call('DEL', versionKey, runsKey)
    redis.call('ZREM', superseded, digest)
    redis.call('HDEL', tenantTag .. 'agents:powers', digest)
  end
end
