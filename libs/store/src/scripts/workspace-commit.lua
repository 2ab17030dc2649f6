-- workspace-commit: apply a batch of workspace writes and deletes (what a shell command changed)
-- together, once per effect id, fenced by the run lease; records the tool's result with it.
-- KEYS[1] run hash  KEYS[2] workspace hash (path -> content)  KEYS[3] applied effects hash (effect id -> result)
-- ARGV[1] lease token  ARGV[2] effect id  ARGV[3] max workspace bytes
-- ARGV[4] lease length (ms), from now on Redis's clock  ARGV[5] result to record  ARGV[6] number of writes N
-- ARGV[7 .. 6+2N] pairs of path, content to write  ARGV[7+2N ..] paths to delete
-- Result: {'applied', result} | {'replayed', first result} | {'rejected', reason} (nothing changed) | {'lost'}
if redis.call('HGET', KEYS[1], 'lease') ~= ARGV[1] then
  return {'lost'}
end
local done = redis.call('HGET', KEYS[3], ARGV[2])
if done then
  return {'replayed', done}
end
redis.call('HSET', KEYS[1], 'leaseUntil', redisClockMs() + tonumber(ARGV[4]))
local writes = tonumber(ARGV[6])
local firstDelete = 7 + 2 * writes
local total = tonumber(redis.call('HGET', KEYS[1], 'wsBytes') or '0')
local before = total
for i = 7, firstDelete - 1, 2 do
  total = total - redis.call('HSTRLEN', KEYS[2], ARGV[i]) + #ARGV[i + 1]
end
for i = firstDelete, #ARGV do
  total = total - redis.call('HSTRLEN', KEYS[2], ARGV[i])
end
-- Only growth is refused: a workspace over a limit lowered since can still shrink or stay as it is
-- (a batch of no changes records a result, or marks a POST as sent).
if total > tonumber(ARGV[3]) and total > before then
  return {'rejected', 'workspace full: the changes would make ' .. total .. ' bytes, over the limit of ' .. ARGV[3]}
end
for i = 7, firstDelete - 1, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
for i = firstDelete, #ARGV do
  redis.call('HDEL', KEYS[2], ARGV[i])
end
redis.call('HSET', KEYS[1], 'wsBytes', total)
redis.call('HSET', KEYS[3], ARGV[2], ARGV[5])
return {'applied', ARGV[5]}
