-- read-run-events: a run's events after a sequence number, read from the tenant stream through the
-- run's list of seqs. Events the tenant stream has trimmed away are skipped.
-- KEYS[1] the run's event seqs (list, ascending)  KEYS[2] tenant event stream
-- ARGV[1] since (seq; only later events)  ARGV[2] limit
-- Result: the events' JSON, oldest first (at most limit)
local since, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local oldest = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
if not oldest then
  return {}
end
local floor = math.max(since, tonumber(string.match(oldest[1], '%d+$')) - 1)
-- Binary search for the first seq above the floor.
local lo, hi = 0, redis.call('LLEN', KEYS[1])
while lo < hi do
  local mid = math.floor((lo + hi) / 2)
  if tonumber(redis.call('LINDEX', KEYS[1], mid)) > floor then
    hi = mid
  else
    lo = mid + 1
  end
end
local out = {}
for _, seq in ipairs(redis.call('LRANGE', KEYS[1], lo, lo + limit - 1)) do
  local id = '0-' .. seq
  local entry = redis.call('XRANGE', KEYS[2], id, id)[1]
  if entry then
    out[#out + 1] = entry[2][2]
  end
end
return out
