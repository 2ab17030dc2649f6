-- claim-interaction: an admin takes an open approval (or gives it up) so colleagues see who is on it.
-- KEYS[1..3] emit prologue  KEYS[4] interaction hash
-- ARGV[1..7] emit prologue  ARGV[8] claimant subject  ARGV[9] claim end (epoch ms, '' = release)
-- ARGV[10] interaction.claimed data JSON
-- Result: {'claimed'} | {'released'} | {'held', subject, until ms} (a live claim of someone else)
--   | {'not_claimed'} (release without a claim of the caller) | {'closed', status} | {'missing'}
local current = redis.call('HMGET', KEYS[4], 'status', 'runId', 'claimSubject', 'claimUntil')
if not current[1] or current[2] ~= RUN_ID then
  return {'missing'}
end
if current[1] ~= 'open' then
  return {'closed', current[1]}
end
local live = current[3] and tonumber(current[4]) > NOW_MS
if live and current[3] ~= ARGV[8] then
  return {'held', current[3], current[4]}
end
if ARGV[9] == '' then
  if not live then
    return {'not_claimed'}
  end
  redis.call('HDEL', KEYS[4], 'claimSubject', 'claimUntil')
  emit('interaction.claimed', ARGV[10])
  return {'released'}
end
redis.call('HSET', KEYS[4], 'claimSubject', ARGV[8], 'claimUntil', ARGV[9])
emit('interaction.claimed', ARGV[10])
return {'claimed'}
