-- A lease on Redisson hash lock KEYS[1] whoever holds it (RedissonMultiLock's lease: the
-- generic PEXPIRE script it sends after taking its members names no owner): its TTL becomes
-- ARGV[1] ms. ARGV[2] says how: "max", never shorter (the script names no owner, so any client
-- could send it, and a shorter TTL would end a holder's window early: a force release);
-- "set", exactly ARGV[1] as PEXPIRE does (where force release is allowed anyway); "min", only
-- shorter (PEXPIRE's LT). Only a hash with a TTL (a Redisson lock) is touched. Its note KEYS[2]
-- (a lock-delay) follows the TTL set (hashnote.lua).
-- A read-write lock (rwlock.lua) has each holder's window set so.
-- With "set" or "min", ARGV[3] is the prints (KEYS[3], the lock's pin, is printed) a quorum read just before (print.lua): the TTL
-- is set only where the lock still prints as one of them, so a late copy never shortens a lock
-- taken since by another client.
-- Returns 1 when the lock is there and its TTL was set or already as asked; else 0.
if redis.call("TYPE", KEYS[1])["ok"] ~= "hash" or ARGV[2] ~= "max" and not printIn(lockPrint(), ARGV[3]) then
  return 0
end
if rwMode(KEYS[1]) then
  if RW.settle(KEYS[1], KEYS[2], RW.hs) == 0 then
    return 0
  end
  local e, opt = RW.now() + tonumber(ARGV[1]), ({max = "GT", min = "LT"})[ARGV[2]]
  for _, h in ipairs(redis.call("HKEYS", KEYS[1])) do -- the live holders (never "mode": a lock-delay's end)
    if h ~= "mode" and opt then
      redis.call("ZADD", RW.hs, opt, e, h)
    elseif h ~= "mode" then
      redis.call("ZADD", RW.hs, e, h)
    end
  end
  RW.settle(KEYS[1], KEYS[2], RW.hs)
  return 1
end
local ttl = redis.call("PTTL", KEYS[1])
if ttl <= 0 then
  return 0 -- no TTL: not a lock
end
local ms = tonumber(ARGV[1])
if ARGV[2] == "set" or (ARGV[2] == "max" and ttl < ms) or (ARGV[2] == "min" and ttl > ms) then
  redis.call("PEXPIRE", KEYS[1], ms)
  followHash(KEYS[1], KEYS[2], ms)
  return 1
end
return ARGV[2] == "max" and 1 or 0
