-- index-after: where a listing goes on in a sorted set, read in one step so that entries removed
-- meanwhile cannot shift it: up to N entries past a member, in the set's order.
-- KEYS[1] the sorted set
-- ARGV[1] the member the listing stands at  ARGV[2] N  ARGV[3] 'ascending' | 'descending'
-- Result: {member, score, member, score, ...} past the member (empty at the end), or false when the
--   member is no longer in the set
local ascending = ARGV[3] == 'ascending'
local rank
if ascending then
  rank = redis.call('ZRANK', KEYS[1], ARGV[1])
else
  rank = redis.call('ZREVRANK', KEYS[1], ARGV[1])
end
if not rank then
  return false
end
local last = rank + tonumber(ARGV[2])
if ascending then
  return redis.call('ZRANGE', KEYS[1], rank + 1, last, 'WITHSCORES')
end
return redis.call('ZREVRANGE', KEYS[1], rank + 1, last, 'WITHSCORES')
