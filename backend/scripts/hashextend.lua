-- Sets hash lock KEYS[1]'s TTL to ARGV[2] ms while owner ARGV[1] holds it; its note KEYS[2]
-- (a lock-delay) follows (hashnote.lua). Of a read-write lock (rwlock.lua; KEYS[3] its
-- holders) it is the owner's own window that is set, and the hash lives as long as the last
-- holder's.
-- Returns 1 when extended, 0 when the owner does not hold it.
local rw = rwMode(KEYS[1])
if rw then
  if rwSettle(KEYS[1], KEYS[2], KEYS[3]) == 0 or not rwHolds(KEYS[1], ARGV[1]) then
    return 0
  end
  rwEnd(KEYS[3], ARGV[1], tonumber(ARGV[2]), true)
  rwSettle(KEYS[1], KEYS[2], KEYS[3])
  return 1
end
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  followHash(KEYS[1], KEYS[2], tonumber(ARGV[2]))
  return 1
end
return 0
