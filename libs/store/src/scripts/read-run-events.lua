-- read-run-events: a run's (or an owner's) events after a sequence number, read from the tenant
-- stream through the run's (the owner's) seqs. Events the tenant stream has trimmed away are skipped, and said so.
-- KEYS[1] the event seqs (string of 6-byte big-endian numbers, ascending)  KEYS[2] tenant event stream
-- KEYS[3] the seq of the newest event trimmed from the tenant stream  KEYS[4] the hash that holds the
-- newest seq cut from KEYS[1] (kept to the newest MAXLEN): the run hash, or the tenant's owner cuts
-- ARGV[1] since (seq; only later events)  ARGV[2] limit  ARGV[3] the field of KEYS[4] that holds the
-- cut (`seqsCut` of a run, the owner's digest)
-- Result: {truncated, entries}: truncated 1 when the run had events after since that the stream (or
--   its seqs) no longer holds, else 0; entries the events' stream entries ({id, fields}), oldest first (at most limit)
local since, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local count = redis.call('STRLEN', KEYS[1]) / SEQ_BYTES
local function firstAbove(above)
  return firstPackedAbove(KEYS[1], count, above)
end
-- Below the floor the stream holds nothing: the newest event trimmed, or before its oldest entry
-- (a stream trimmed by an older release, which kept no record of it).
local oldest = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
local trimmed = tonumber(redis.call('GET', KEYS[3]) or '0')
local floor = math.max(since, trimmed, oldest and tonumber(string.match(oldest[1], '%d+$')) - 1 or math.huge)
local lo = firstAbove(floor)
local cut = tonumber(redis.call('HGET', KEYS[4], ARGV[3]) or '0')
local truncated = (since < cut or (floor > since and firstAbove(since) < lo)) and 1 or 0
local out = {}
local last = math.min(count, lo + limit) - 1
if last < lo then
  return {truncated, out}
end
local packed = redis.call('GETRANGE', KEYS[1], lo * SEQ_BYTES, (last + 1) * SEQ_BYTES - 1)
for i = 0, last - lo do
  local id = string.format('0-%d', (struct.unpack('>I6', packed, i * SEQ_BYTES + 1)))
  local entry = redis.call('XRANGE', KEYS[2], id, id)[1]
  if entry then
    out[#out + 1] = entry
  end
end
return {truncated, out}
