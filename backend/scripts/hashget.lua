-- Reads field ARGV[1] of hash KEYS[1] and the key's remaining TTL in one step; of a
-- read-write lock (rwlock.lua; KEYS[2] its note), as its live holders
-- leave it. ARGV[2] "read-locked" reads instead whether it is read-locked: "1" when read, or
-- written by a thread that reads it too (Redisson 3.52's readLock().isLocked()).
-- Returns {value or nil, pttl in ms}.
if rwMode(KEYS[1]) then
  RW.settle(KEYS[1], KEYS[2], RW.hs)
end
if ARGV[2] == "read-locked" then
  local mode = rwMode(KEYS[1])
  local yes = mode == "read" or mode == "write" and redis.call("HLEN", KEYS[1]) > 2
  return {yes and "1" or false, redis.call("PTTL", KEYS[1])}
end
return {redis.call("HGET", KEYS[1], ARGV[1]), redis.call("PTTL", KEYS[1])}
