-- Shared prologue of every script that changes state. Each such script takes the same first
-- three KEYS and first seven ARGV, so that a state change and its event are one atomic step:
--   KEYS[1] tenant sequence counter   KEYS[2] tenant event stream   KEYS[3] the run's event seqs (packed string)
--   ARGV[1] tenant  ARGV[2] run id  ARGV[3] run owner  ARGV[4] ISO time  ARGV[5] stream MAXLEN
--   ARGV[6] fan-out channel  ARGV[7] now (epoch ms)
-- Six tenant keys are named after KEYS[1] ("<tenant tag>:seq" -> "<tenant tag>:<name>"): same
-- hash tag, so the same cluster slot. The gauges hash (parked runs, open interactions by kind, for
-- /metrics), the deadline timer (the due time of the earliest timer job scheduled for the
-- tenant's open interactions, which its open-interaction index orders by deadline), the in-flight
-- runs, the active runs, the runs whose sub-agents are still to be stopped (zsets of run ids) and
-- the seq of the newest event trimmed from the tenant stream.
local TENANT, RUN_ID, OWNER, AT = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local MAXLEN, CHANNEL, NOW_MS = ARGV[5], ARGV[6], tonumber(ARGV[7])
-- Times in run and interaction hashes are epoch ms (shorter than ISO); events carry the ISO time.
local AT_MS = ARGV[7]
local TENANT_TAG = string.sub(KEYS[1], 1, -4)
local GAUGES = TENANT_TAG .. 'gauges'
local TRIMMED = TENANT_TAG .. 'trimmed'
local DEADLINE_TIMER = TENANT_TAG .. 'deadline-timer'
local INFLIGHT = TENANT_TAG .. 'inflight'
local ACTIVE_RUNS = TENANT_TAG .. 'active-runs'
local CASCADES = TENANT_TAG .. 'cascades'

-- The tenant's in-flight runs (queued or running, scored by when they became so) are what the
-- sweeper watches for a lost job. A parked run is not in flight: its interaction's deadline or an
-- answer wakes it, so the sweeper's work grows with the runs in progress, not with those parked.
local function enterInflight(runId)
  redis.call('ZADD', INFLIGHT, NOW_MS, runId)
end

-- A run parks or ends. An ended run also leaves the tenant's active runs and its owner's (the
-- concurrent-run counts; the owner's set is named by the owner's digest, as admit-run's KEYS[5]).
local function leaveInflight(runId, ended)
  redis.call('ZREM', INFLIGHT, runId)
  if ended then
    redis.call('ZREM', ACTIVE_RUNS, runId)
    redis.call('ZREM', ACTIVE_RUNS .. ':user:' .. redis.sha1hex(OWNER), runId)
  end
end

-- After an interaction with a deadline was indexed: returns the due time (ms) of a timer job the
-- caller must schedule, or false when an earlier timer is already scheduled (it re-arms itself).
-- A timer already past due may be the one sweeping right now, or one whose job was lost: it does
-- not cover a new deadline.
local function armDeadline(dueMs)
  local timer = tonumber(redis.call('GET', DEADLINE_TIMER))
  if timer and timer <= dueMs and timer > NOW_MS then
    return false
  end
  redis.call('SET', DEADLINE_TIMER, dueMs)
  return dueMs
end

-- The parked-runs gauge: up when a run enters the waiting status, down when it leaves it (never
-- below zero: a gauge, not a ledger).
local function countParked()
  redis.call('HINCRBY', GAUGES, 'parked', 1)
end

local function countUnparked()
  if redis.call('HINCRBY', GAUGES, 'parked', -1) < 0 then
    redis.call('HSET', GAUGES, 'parked', 0)
  end
end

-- Counts an interaction leaving the open status; the kind was recorded on its hash when it opened.
local function countClosed(interactionKey)
  local kind = redis.call('HGET', interactionKey, 'kind')
  if kind then
    redis.call('HINCRBY', GAUGES, 'open:' .. kind, -1)
  end
end

-- A run's event seqs are one string of 6-byte big-endian numbers, oldest first: the smallest form
-- Redis keeps them in (a list costs twice as much, a stream of its own ~4.7 KB, since Redis
-- preallocates a stream's newest node). Trimmed to the newest MAXLEN, 100 seqs at a time: returns
-- the string's length and, when it was trimmed, the newest seq cut.
local function appendPacked(seqsKey, seq)
  local length = redis.call('APPEND', seqsKey, struct.pack('>I6', seq))
  local keep = tonumber(MAXLEN) * SEQ_BYTES
  if length <= keep + 100 * SEQ_BYTES then
    return length, nil
  end
  local cut = length - keep
  local newestCut = struct.unpack('>I6', redis.call('GETRANGE', seqsKey, cut - SEQ_BYTES, cut - 1))
  redis.call('SET', seqsKey, redis.call('GETRANGE', seqsKey, cut, -1), 'KEEPTTL')
  return keep, newestCut
end

-- The newest seq cut from a run's seqs goes on the run's hash (`seqsCut`, the hash is "<run>" where
-- the seqs are "<run>:seqs"), so a replay from below it is told events are missing.
local function appendSeq(runSeqsKey, seq)
  local _, newestCut = appendPacked(runSeqsKey, seq)
  local runKey = string.sub(runSeqsKey, 1, -6)
  -- Not on a hash that has expired (it would come back without its TTL).
  if newestCut and redis.call('EXISTS', runKey) == 1 then
    redis.call('HSET', runKey, 'seqsCut', string.format('%d', newestCut))
  end
end

-- Each owner's event seqs ("owner:<SHA-1 of the owner>:seqs"), packed as a run's: a member's
-- tenant-wide replay reads its own events through them, not the whole tenant stream. Every 100 seqs
-- the ones of events the tenant stream has trimmed go too (and at most the newest MAXLEN are kept), so
-- together they take 6 bytes per event the stream holds; the newest seq cut goes in OWNER_CUTS (by
-- digest). OWNER_SEQS_FROM is the first seq filed this way in the tenant (an older release filed
-- none): a replay from before it reads the tenant stream.
local OWNER_CUTS = TENANT_TAG .. 'owner-cuts'
local OWNER_SEQS_FROM = TENANT_TAG .. 'owner-seqs-from'
-- OWNER_LAST scores each owner's digest at or below the newest seq in its seqs (set when they start,
-- added if missing at each drop). Seqs are dropped only when their owner gets an event, so an owner
-- who has none any more (a user who left) would keep seqs of trimmed events for ever: trimming the
-- stream sweeps owners scored at or below the newest seq trimmed, and deletes the seqs of those
-- whose newest seq is gone from the stream, keeping that seq as their cut (a replay from below it
-- is told events are missing); the others are scored at their newest seq. A trimmed event makes at
-- most one owner due (its own, scored at it), so a trim sweeps as many owners as it trimmed events,
-- and OWNER_SWEEP_EXTRA more for a backlog (owners an older release left, found at their 100th seq).
local OWNER_LAST = TENANT_TAG .. 'owner-last'
local OWNER_SWEEP_EXTRA = 50
local function dropTrimmedSeqs(seqsKey, length, digest)
  -- How many of the seqs are of trimmed events.
  local trimmedCount = firstPackedAbove(seqsKey, length / SEQ_BYTES, tonumber(redis.call('GET', TRIMMED) or '0'))
  if trimmedCount > 0 then
    redis.call('HSET', OWNER_CUTS, digest, string.format('%d', packedSeqAt(seqsKey, trimmedCount - 1)))
    redis.call('SET', seqsKey, redis.call('GETRANGE', seqsKey, trimmedCount * SEQ_BYTES, -1))
  end
end

local ownerDigests = {}
local function appendOwnerSeq(owner, seq)
  local digest = ownerDigests[owner]
  if not digest then
    digest = redis.sha1hex(owner)
    ownerDigests[owner] = digest
  end
  local seqsKey = TENANT_TAG .. 'owner:' .. digest .. ':seqs'
  local length, newestCut = appendPacked(seqsKey, seq)
  if length == SEQ_BYTES then
    redis.call('SETNX', OWNER_SEQS_FROM, string.format('%d', seq))
    redis.call('ZADD', OWNER_LAST, string.format('%d', seq), digest)
  elseif newestCut then
    redis.call('HSET', OWNER_CUTS, digest, string.format('%d', newestCut))
  end
  if length % (100 * SEQ_BYTES) == 0 then
    dropTrimmedSeqs(seqsKey, length, digest)
    -- Seqs an older release started, unknown to OWNER_LAST until now.
    redis.call('ZADD', OWNER_LAST, 'NX', string.format('%d', seq), digest)
  end
end

local function sweepDepartedOwners(trimmedSeq, trimmedCount)
  local due = redis.call('ZRANGEBYSCORE', OWNER_LAST, '-inf', string.format('%d', trimmedSeq), 'LIMIT', 0, trimmedCount + OWNER_SWEEP_EXTRA)
  for _, digest in ipairs(due) do
    local seqsKey = TENANT_TAG .. 'owner:' .. digest .. ':seqs'
    local count = redis.call('STRLEN', seqsKey) / SEQ_BYTES
    local newest = count > 0 and packedSeqAt(seqsKey, count - 1) or nil
    if newest and newest > trimmedSeq then
      redis.call('ZADD', OWNER_LAST, string.format('%d', newest), digest)
    else
      if newest then
        redis.call('HSET', OWNER_CUTS, digest, string.format('%d', newest))
        redis.call('DEL', seqsKey)
      end
      redis.call('ZREM', OWNER_LAST, digest)
    end
  end
end

-- A tenant's sequence numbers increase strictly but are not consecutive: each is at least the
-- Redis clock in units of 10 µs since 2026-01-01 (the floor). A Redis restarted from an AOF that lost
-- its last second rolls the counter back; the floor has moved on meanwhile, so the numbers issued
-- after the restart are still above every number clients saw before it (as long as the tenant wrote
-- under 100,000 events/s, the floor's pace). The clock and the counter are read once per script
-- (nothing else runs meanwhile): its later events take the last seq + 1.
local SEQ_EPOCH_S = 1767225600
local lastSeq, seqFloor = nil, nil
local function nextSeq()
  if not lastSeq then
    local seconds, micros = redisTime()
    seqFloor = (seconds - SEQ_EPOCH_S) * 100000 + math.floor(micros / 10)
    lastSeq = tonumber(redis.call('GET', KEYS[1]) or '0')
  end
  local previous = lastSeq
  lastSeq = math.max(previous + 1, seqFloor)
  redis.call('SET', KEYS[1], string.format('%d', lastSeq))
  return lastSeq, previous
end

-- The tenant stream keeps about MAXLEN events. This script trims it (not XADD's MAXLEN ~) once it
-- holds TRIM_SLACK more, a few pages at most per call, and keeps the seq of the newest event trimmed
-- in TRIMMED: a replay from below it is told that events are missing.
local TRIM_SLACK, TRIM_MOST = 100, 200
local function trimEvents()
  local excess = redis.call('XLEN', KEYS[2]) - tonumber(MAXLEN)
  if excess < TRIM_SLACK then
    return
  end
  local doomed = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', math.min(excess, TRIM_MOST))
  local newest = tonumber(string.match(doomed[#doomed][1], '%d+$'))
  redis.call('XTRIM', KEYS[2], 'MINID', string.format('0-%d', newest + 1))
  redis.call('SET', TRIMMED, string.format('%d', newest))
  sweepDepartedOwners(newest, #doomed)
end

-- The events of this script, as published: one message per script, a JSON array of them in seq
-- order, sent by publishEvents() once the script's body has returned (scripts.ts wraps every body
-- that uses this prologue). Each subscriber then reads, parses and schedules one message per step
-- instead of one per event.
local published = {}
local function publishEvents()
  if #published > 0 then
    redis.call('PUBLISH', CHANNEL, '[' .. table.concat(published, ',') .. ']')
  end
end

-- Appends one event of another run of the same tenant (a parent woken by its child), with the
-- tenant's next sequence number; returns the number. The event is stored once, in the tenant
-- stream; the run keeps only its seqs (runSeqsKey nil: a run whose keys are gone or expiring).
-- The event as published also names the tenant's previous seq (`prev`), so a subscriber tells a
-- message it missed from a gap in the numbers.
local function emitFor(runSeqsKey, runId, owner, eventType, dataJson)
  owner = owner or ''
  local seq, previous = nextSeq()
  -- Formatted, not concatenated: Lua writes numbers of 15 digits and more in exponent notation.
  local seqText = string.format('%d', seq)
  local json = '{"seq":' .. seqText .. ',"tenant":' .. cjson.encode(TENANT) .. ',"runId":' .. cjson.encode(runId) ..
    ',"owner":' .. cjson.encode(owner) .. ',"at":' .. cjson.encode(AT) .. ',"type":' .. cjson.encode(eventType) ..
    ',"data":' .. dataJson .. ',"prev":' .. string.format('%d', previous) .. '}'
  -- Stored as fields, not as the JSON: a stream node keeps the field names once for all its
  -- entries, and the seq (the id), the tenant (the key) and the time (ms) are rebuilt on read.
  redis.call('XADD', KEYS[2], '0-' .. seqText, 'r', runId, 'o', owner, 'a', AT_MS, 't', eventType, 'd', dataJson)
  trimEvents()
  if runSeqsKey then
    appendSeq(runSeqsKey, seq)
  end
  if owner ~= '' then
    appendOwnerSeq(owner, seq)
  end
  published[#published + 1] = json
  return seq
end

-- Adds `"name":number` to the message of the event emitted last, as it is published (not as it is
-- stored: like `prev`, it is for Parley's own subscribers).
local function annotatePublished(name, value)
  local last = published[#published]
  published[#published] = string.sub(last, 1, -2) .. ',"' .. name .. '":' .. string.format('%d', value) .. '}'
end

-- Appends one event (type + JSON data) of this script's run.
local function emit(eventType, dataJson)
  return emitFor(KEYS[3], RUN_ID, OWNER, eventType, dataJson)
end

-- The run's status (and stage, for agents with stages) as run.status data.
local function statusData(runKey, status, waitReason)
  local data = {status = status}
  if waitReason then
    data.waitReason = waitReason
  end
  local stage = redis.call('HGET', runKey, 'stage')
  if stage then
    data.stage = stage
  end
  return cjson.encode(data)
end

-- Every script that calls this has the run hash at KEYS[4].
local function emitStatus(status, waitReason)
  return emit('run.status', statusData(KEYS[4], status, waitReason))
end

-- Fencing: true when the caller still holds the run's lease.
local function holdsLease(runKey, token)
  return redis.call('HGET', runKey, 'lease') == token
end

-- Why the holder of `token` may not take its next step: 'lost' (another advancer holds the run),
-- 'cancelled' (a stop was asked), or nil when it may.
local function blockedStep(runKey, token)
  local run = redis.call('HMGET', runKey, 'lease', 'cancel')
  if run[1] ~= token then
    return 'lost'
  end
  if run[2] == '1' then
    return 'cancelled'
  end
  return nil
end

local function isEnded(status)
  return not status or status == 'finished' or status == 'failed' or status == 'cancelled'
end

-- A job numbered above its run's wake counter was sent ahead of the wake it expected (an answer's
-- job sent behind its resolve, see InteractionResolver). Once it takes the run, or gives up, the
-- counter is raised to its number, so that no later wake is given the id of a job that is done.
-- jobWake '' = none; counter: the run's `wake` field when the caller has read it (nil: read here).
local function raiseWakeTo(runKey, jobWake, counter)
  if jobWake ~= '' and tonumber(counter or redis.call('HGET', runKey, 'wake') or '0') < tonumber(jobWake) then
    redis.call('HSET', runKey, 'wake', jobWake)
  end
end

-- Wake a run of this tenant (this one, or a parent): push to its inbox; a waiting run becomes
-- queued and the caller must enqueue job `wake`. Returns the new wake counter, or -1 when the run
-- is not waiting (its advancer will see the inbox).
local function wakeRun(runKey, inboxKey, item, runSeqsKey, runId, owner)
  redis.call('RPUSH', inboxKey, item)
  if redis.call('HGET', runKey, 'status') ~= 'waiting' then
    return -1
  end
  local n = redis.call('HINCRBY', runKey, 'wake', 1)
  countUnparked()
  redis.call('HSET', runKey, 'status', 'queued', 'updatedAt', AT_MS)
  redis.call('HDEL', runKey, 'waitReason', 'pendingInteractionId')
  enterInflight(runId)
  emitFor(runSeqsKey, runId, owner, 'run.status', statusData(runKey, 'queued', nil))
  return n
end

local function wake(runKey, inboxKey, item)
  return wakeRun(runKey, inboxKey, item, KEYS[3], RUN_ID, OWNER)
end

-- A sub-agent ended: its result goes into the parent's log and wakes the parent, in the same step.
-- parent = {hash, log, inbox, event seqs} keys; returns the parent's wake counter, or -1.
local function deliverToParent(parent, parentId, resultEntry)
  local p = redis.call('HMGET', parent[1], 'status', 'owner')
  if isEnded(p[1]) then
    return -1
  end
  redis.call('RPUSH', parent[2], resultEntry)
  local result = cjson.decode(resultEntry)
  emitFor(parent[4], parentId, p[2], 'child.ended',
    cjson.encode({childRunId = result.childRunId, status = result.status, reason = result.reason}))
  return wakeRun(parent[1], parent[3], 'child', parent[4], parentId, p[2])
end

-- The run's pending messages and sub-agents among the keys it owns: RedisKeys.runOwned lists log,
-- inbox, workspace, effects, messages, children, from KEYS[firstOwned].
local OWNED_MESSAGES = 4
local OWNED_CHILDREN = 5

-- A run ends with messages it never read: they are dropped, and said so, before its terminal
-- events (a client following the run stops at those). It reads and decodes before its first write.
local function discardMessages(firstOwned)
  local messagesKey = KEYS[firstOwned + OWNED_MESSAGES]
  local pending = redis.call('LRANGE', messagesKey, 0, -1)
  if #pending == 0 then
    return
  end
  local ids = {}
  for i, raw in ipairs(pending) do
    ids[i] = cjson.decode(raw).messageId
  end
  redis.call('DEL', messagesKey)
  emit('message.discarded', cjson.encode({messageIds = ids}))
end

-- The common end of end-run and cancel-run, after the terminal status and its events: the grants
-- go, the run leaves the tenant's in-flight and active runs, the run's keys (KEYS[3], KEYS[4] and
-- KEYS[firstOwned..]) get the retention period, and a
-- sub-agent's result goes to its parent. Returns the parent's wake counter, or -1.
local function closeRun(grantsKey, firstOwned, retention, parent, parentId, resultEntry)
  redis.call('DEL', grantsKey)
  leaveInflight(RUN_ID, true)
  leaveAgentVersion(TENANT_TAG, KEYS[4], RUN_ID)
  -- Its sub-agents are stopped by the caller, after this step: filed until then, for the sweeper.
  if redis.call('SCARD', KEYS[firstOwned + OWNED_CHILDREN]) > 0 then
    redis.call('ZADD', CASCADES, NOW_MS, RUN_ID)
  end
  redis.call('EXPIRE', KEYS[3], retention)
  redis.call('EXPIRE', KEYS[4], retention)
  -- A start's idempotency key record (a key of the tenant's slot) is forgotten with its run.
  local startKey = redis.call('HGET', KEYS[4], 'startKey')
  if startKey then
    redis.call('EXPIRE', startKey, retention)
  end
  for i = firstOwned, #KEYS do
    redis.call('EXPIRE', KEYS[i], retention)
  end
  if parentId == '' then
    return -1
  end
  return deliverToParent(parent, parentId, resultEntry)
end
