-- rate-refund: gives back one hit of a fixed-window counter whose request then failed (nothing of it
-- was kept), so a failed request leaves no trace; the window keeps its expiry.
-- KEYS[1] the window's counter
-- Result: the count left (0: the counter is gone)
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local left = redis.call('DECR', KEYS[1])
if left <= 0 then
  redis.call('DEL', KEYS[1])
  return 0
end
return left
