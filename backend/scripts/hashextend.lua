-- Sets hash lock KEYS[1]'s TTL to ARGV[2] ms while owner ARGV[1] holds it; its note KEYS[2]
-- (a lock-delay) follows (hashnote.lua). Of a read-write lock (rwlock.lua) it is the owner's
-- own window that is set, and the hash lives as long as the last holder's.
-- Returns 1 when extended, 0 when the owner does not hold it.
local rw, held, bad = rwMode(KEYS[1], ARGV[1]) -- rwlock.lua
if bad then
  return bad -- a key of another type
end
if rw then
  if RW.settle(KEYS[1], KEYS[2], RW.hs) == 0 or not RW.holds(KEYS[1], ARGV[1]) then
    return 0
  end
  RW.setEnd(RW.hs, ARGV[1], tonumber(ARGV[2]), true)
  RW.settle(KEYS[1], KEYS[2], RW.hs)
  return 1
end
if held and ARGV[1] ~= "mode" then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  followHash(KEYS[1], KEYS[2], tonumber(ARGV[2]))
  return 1
end
return 0
