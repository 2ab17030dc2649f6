-- expire-due: a tenant's deadline timer resolves, in one step, up to ARGV[8] open interactions whose
-- deadline has passed, each as resolve-interaction would for a deadline: status `expired` by
-- {kind: deadline}, out of the indexes, the `answer` log entry, `interaction.resolved` and a wake of
-- its run. Claims do not bind a deadline. A deadline has passed when Redis's clock (TIME) reached it.
-- KEYS[1..3] emit prologue (KEYS[3] unused: each run's own seqs are named from ARGV[11])
-- KEYS[4] tenant open-interaction index (ids by deadline)  KEYS[5] tenant open-approval index (keys)
-- ARGV[1..7] emit prologue (run id and owner unused)  ARGV[8] most to expire  ARGV[9] retention (s)
-- ARGV[10] interaction key prefix (append the id)  ARGV[11] run key prefix (append the run id; the run's
-- log, inbox and seqs add ':log', ':inbox', ':seqs' as in keys.ts)
-- ARGV[12] the "no deadline" score (entries from there on wait forever)
-- Result: flat list of {interaction id, run id, wake counter or -1, deadline ms} per expired interaction,
--   then the count of entries dropped because their interaction was no longer open, then Redis's
--   clock (epoch ms) the deadlines were judged by
-- Due by Redis's clock, not the caller's: hosts whose clocks disagree agree on when a deadline passed.
local due = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. math.min(redisClockMs() + 1, tonumber(ARGV[12])), 'WITHSCORES', 'LIMIT', 0, ARGV[8])
local by = '{"kind":"deadline"}'
local out = {}
local dropped = 0
for i = 1, #due, 2 do
  local id, deadline = due[i], due[i + 1]
  local ixKey = ARGV[10] .. id
  redis.call('ZREM', KEYS[4], id)
  local ix = redis.call('HMGET', ixKey, 'status', 'runId', 'kind', 'owner')
  if ix[1] ~= 'open' then
    dropped = dropped + 1
  else
    local runId = ix[2]
    local runKey = ARGV[11] .. runId
    redis.call('HSET', ixKey, 'status', 'expired', 'resolvedAt', AT_MS, 'resolvedBy', by)
    redis.call('HDEL', ixKey, 'claimSubject', 'claimUntil')
    redis.call('ZREM', KEYS[5], ixKey)
    countClosed(ixKey)
    redis.call('EXPIRE', ixKey, ARGV[9])
    local owner = ix[4] or ''
    local seqsKey = runKey .. ':seqs'
    local idJson = cjson.encode(id)
    -- A run that ended (or is gone after its retention) gets no answer entry and no wake: they
    -- would recreate its keys without a TTL.
    local runLive = not isEnded(redis.call('HGET', runKey, 'status'))
    if runLive then
      redis.call('RPUSH', runKey .. ':log',
        '{"type":"answer","interactionId":' .. idJson .. ',"outcome":"expired","by":' .. by .. ',"at":' .. cjson.encode(AT) .. '}')
    end
    emitFor((runLive or redis.call('EXISTS', seqsKey) == 1) and seqsKey or nil, runId, owner, 'interaction.resolved',
      '{"interactionId":' .. idJson .. ',"outcome":"expired","by":' .. by .. ',"at":' .. cjson.encode(AT) ..
      (ix[3] == 'tool_approval' and ',"decision":"deny"' or '') .. '}')
    local wake = runLive and wakeRun(runKey, runKey .. ':inbox', 'answer', seqsKey, runId, owner) or -1
    out[#out + 1] = id
    out[#out + 1] = runId
    out[#out + 1] = wake
    out[#out + 1] = deadline
  end
end
out[#out + 1] = dropped
out[#out + 1] = redisClockMs()
return out
