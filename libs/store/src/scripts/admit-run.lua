-- admit-run: the tenant-limit check before the gateway starts a run; when admitted, counts the start
-- in the windows and, under a concurrent-run limit, adds the run id to the tenant's active runs (and,
-- under the per-owner one, to the owner's), in one step. Nothing is written when the run is refused.
-- A run leaves both active sets when it ends (emit.lua's leaveInflight); at a limit the set's oldest
-- members are checked too (at most ARGV[8]) and the ended or missing ones removed (an admission whose
-- run was never created, runs admitted before ends removed them). The run hashes read there share
-- the tenant's hash tag (the same slot as KEYS).
-- KEYS[1] runs-per-minute window counter  KEYS[2] tenant active runs (zset, score = start ms)
-- KEYS[3] tenant open interactions (zset)  KEYS[4] the runs-per-minute window counter of the run's owner
-- KEYS[5] the owner's active runs (zset, score = start ms)
-- ARGV[1] run id  ARGV[2] now (epoch ms)  ARGV[3] runs per window (0 = off)  ARGV[4] window (ms)
-- ARGV[5] most active runs (0 = off)  ARGV[6] most open interactions (0 = off)
-- ARGV[7] prefix of the tenant's run hash keys (the run id follows)  ARGV[8] most members checked when pruning
-- ARGV[9] grace (ms) before an active id without a run hash counts as gone (its run may be being created)
-- ARGV[10] runs per window of one owner (0 = off)  ARGV[11] most active runs of one owner (0 = off)
-- ARGV[12] how long (ms) an owner's active runs are kept after the owner's last admission
-- Result: {'ok'} | {'runs_per_minute', ms until the window frees} | {'user_runs_per_minute', ms until the
--   owner's window frees} (when both are full: the one that frees last) | {'user_concurrent_runs', the
--   owner's active count} | {'concurrent_runs', active count} | {'open_interactions', open count}
local now = tonumber(ARGV[2])
local perWindow, concurrent, openMax, perUser = tonumber(ARGV[3]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[10])
local userConcurrent = tonumber(ARGV[11])

-- ms until a window counter at its limit frees (one without expiry gets it: it cannot block forever).
local function full(counter, most)
  if most <= 0 or tonumber(redis.call('GET', counter) or '0') < most then
    return nil
  end
  local ttl = redis.call('PTTL', counter)
  if ttl < 0 then
    redis.call('PEXPIRE', counter, ARGV[4])
    ttl = tonumber(ARGV[4])
  end
  return math.max(ttl, 1)
end

-- Both full: the one that frees last is named (a retry sooner would be refused again).
local userWait, tenantWait = full(KEYS[4], perUser), full(KEYS[1], perWindow)
if userWait and (not tenantWait or userWait > tenantWait) then
  return {'user_runs_per_minute', userWait}
end
if tenantWait then
  return {'runs_per_minute', tenantWait}
end

if openMax > 0 then
  local open = redis.call('ZCARD', KEYS[3])
  if open >= openMax then
    return {'open_interactions', open}
  end
end

-- How many of a set's runs have not ended, once its oldest ended or missing ones are removed, when
-- it holds `most` or more (below that, its count is all that matters).
local function activeIn(set, most)
  local active = redis.call('ZCARD', set)
  if active < most then
    return active
  end
  local ids = redis.call('ZRANGE', set, 0, tonumber(ARGV[8]) - 1, 'WITHSCORES')
  for i = 1, #ids, 2 do
    local id, startedAt = ids[i], tonumber(ids[i + 1])
    local status = redis.call('HGET', ARGV[7] .. id, 'status')
    local gone = status == 'finished' or status == 'failed' or status == 'cancelled'
      or (not status and startedAt < now - tonumber(ARGV[9]))
    if gone then
      redis.call('ZREM', set, id)
      active = active - 1
    end
  end
  return active
end

if userConcurrent > 0 then
  local active = activeIn(KEYS[5], userConcurrent)
  if active >= userConcurrent then
    return {'user_concurrent_runs', active}
  end
end
if concurrent > 0 then
  local active = activeIn(KEYS[2], concurrent)
  if active >= concurrent then
    return {'concurrent_runs', active}
  end
end
-- Counted only under a limit; the run leaves both indexes when it ends (end-run, cancel-run).
if concurrent > 0 then
  redis.call('ZADD', KEYS[2], now, ARGV[1])
end
if userConcurrent > 0 then
  redis.call('ZADD', KEYS[5], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[5], ARGV[12])
end

if perWindow > 0 and redis.call('INCR', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
if perUser > 0 and redis.call('INCR', KEYS[4]) == 1 then
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
end
return {'ok'}
