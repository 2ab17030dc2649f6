-- read-run-events: a run's events after a sequence number, read from the tenant stream through the
-- run's seqs. Events the tenant stream has trimmed away are skipped.
-- KEYS[1] the run's event seqs (string of 6-byte big-endian numbers, ascending)  KEYS[2] tenant event stream
-- ARGV[1] since (seq; only later events)  ARGV[2] limit
-- Result: the events' stream entries ({id, fields}), oldest first (at most limit)
local SEQ_BYTES = 6
local since, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local oldest = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
if not oldest then
  return {}
end
local floor = math.max(since, tonumber(string.match(oldest[1], '%d+$')) - 1)
local function seqAt(i)
  return struct.unpack('>I6', redis.call('GETRANGE', KEYS[1], i * SEQ_BYTES, i * SEQ_BYTES + SEQ_BYTES - 1))
end
-- Binary search for the first seq above the floor.
local count = redis.call('STRLEN', KEYS[1]) / SEQ_BYTES
local lo, hi = 0, count
while lo < hi do
  local mid = math.floor((lo + hi) / 2)
  if seqAt(mid) > floor then
    hi = mid
  else
    lo = mid + 1
  end
end
local out = {}
local last = math.min(count, lo + limit) - 1
if last < lo then
  return out
end
local packed = redis.call('GETRANGE', KEYS[1], lo * SEQ_BYTES, (last + 1) * SEQ_BYTES - 1)
for i = 0, last - lo do
  local id = string.format('0-%d', (struct.unpack('>I6', packed, i * SEQ_BYTES + 1)))
  local entry = redis.call('XRANGE', KEYS[2], id, id)[1]
  if entry then
    out[#out + 1] = entry
  end
end
return out
