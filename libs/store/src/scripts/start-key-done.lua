-- start-key-done: a keyed start that had marked its key as starting is done (its run was made, or the
-- start failed): the mark goes, unless it has expired and another start has marked the key since.
-- KEYS[1] the key's starting mark (RedisKeys.startKeyPending)
-- ARGV[1] the run id the start marked it with
-- Result: 1 when the mark was removed, 0 when it was not this start's
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
