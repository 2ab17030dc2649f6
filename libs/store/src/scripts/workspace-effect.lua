-- workspace-effect: apply a workspace write or delete once per effect id, fenced by the run lease.
-- KEYS[1] run hash  KEYS[2] workspace hash (path -> content)  KEYS[3] applied effects hash (effect id -> result)
-- ARGV[1] lease token  ARGV[2] effect id  ARGV[3] 'write' | 'delete'  ARGV[4] path  ARGV[5] content ('' for delete)
-- ARGV[6] max workspace bytes  ARGV[7] lease length (ms), from now on Redis's clock
-- Result: {'applied', result JSON} | {'replayed', result JSON} | {'rejected', reason} | {'lost'}
if redis.call('HGET', KEYS[1], 'lease') ~= ARGV[1] then
  return {'lost'}
end
local done = redis.call('HGET', KEYS[3], ARGV[2])
if done then
  return {'replayed', done}
end
redis.call('HSET', KEYS[1], 'leaseUntil', redisClockMs() + tonumber(ARGV[7]))
local path = ARGV[4]
-- The path as JSON.stringify writes it: cjson writes every slash as \/ (valid JSON, but the model and the
-- CLI read it raw); each \/ it wrote is a slash, since it writes a backslash itself as \\.
local pathJson = string.gsub(cjson.encode(path), '\\/', '/')
local before = redis.call('HSTRLEN', KEYS[2], path)
local existed = redis.call('HEXISTS', KEYS[2], path) == 1
local total = tonumber(redis.call('HGET', KEYS[1], 'wsBytes') or '0')
local result
if ARGV[3] == 'write' then
  local after = total - before + #ARGV[5]
  -- Only growth is refused: a workspace over a limit lowered since can still shrink or stay as it is.
  if after > tonumber(ARGV[6]) and after > total then
    return {'rejected', 'workspace full: writing ' .. #ARGV[5] .. ' bytes to ' .. path .. ' would make ' .. after ..
      ' bytes, over the limit of ' .. ARGV[6]}
  end
  redis.call('HSET', KEYS[2], path, ARGV[5])
  redis.call('HSET', KEYS[1], 'wsBytes', after)
  result = '{"ok":true,"path":' .. pathJson .. ',"bytes":' .. #ARGV[5] .. ',"created":' .. tostring(not existed) .. '}'
else
  redis.call('HDEL', KEYS[2], path)
  redis.call('HSET', KEYS[1], 'wsBytes', total - before)
  result = '{"ok":true,"path":' .. pathJson .. ',"deleted":' .. tostring(existed) .. '}'
end
redis.call('HSET', KEYS[3], ARGV[2], result)
return {'applied', result}
