-- Packed seqs: a string of 6-byte big-endian event seqs, ascending (a run's or an owner's).
local SEQ_BYTES = 6

local function packedSeqAt(key, i)
  return (struct.unpack('>I6', redis.call('GETRANGE', key, i * SEQ_BYTES, i * SEQ_BYTES + SEQ_BYTES - 1)))
end

-- The index of the first of the `count` seqs at `key` above `above` (count when none is): a binary search.
local function firstPackedAbove(key, count, above)
  local lo, hi = 0, count
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if packedSeqAt(key, mid) > above then
      hi = mid
    else
      lo = mid + 1
    end
  end
  return lo
end
