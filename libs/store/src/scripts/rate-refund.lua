-- rate-refund: gives back one hit of fixed-window counters whose request then failed (nothing of it
-- was kept), so a failed request leaves no trace; each window keeps its expiry.
-- KEYS[1..n] the windows' counters (a counter that is gone is left gone)
-- Result: how many counters were given a hit back
local given = 0
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    given = given + 1
    if redis.call('DECR', KEYS[i]) <= 0 then
      redis.call('DEL', KEYS[i])
    end
  end
end
return given
