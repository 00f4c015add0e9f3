-- Force release: delete KEYS[1] whatever it holds, its note KEYS[2], its pin KEYS[3] and a
-- read-write lock's holders (rwlock.lua). With ARGV[1] ("read" or "write"), only a read-write lock
-- (Redisson's RReadWriteLock: a hash with field mode) in that mode, as its live holders leave it
-- (rwlock.lua: a lock whose writer's window ended is read), is deleted.
-- Without, a semaphore of that name (semKeys: quorum.SemaphoreKey's, SemaphoreLeaseKey's) goes too.
-- Returns 1 when KEYS[1] or that semaphore existed (and was deleted), else 0.
if (ARGV[1] or "") ~= "" then
  if rwMode(KEYS[1]) and RW.settle(KEYS[1], KEYS[2], RW.hs) > 0 and rwMode(KEYS[1]) == ARGV[1] then
    rwFree(KEYS[2], RW.hs, "") -- a holder's lock-delay that runs is kept
    redis.call("DEL", KEYS[3], RW.hs)
    return redis.call("DEL", KEYS[1])
  end
  return 0
end
redis.call("DEL", KEYS[2], KEYS[3], rwHoldersPrefix .. KEYS[1])
local sem = redis.call("DEL", semKeys[1] .. KEYS[1], semKeys[2] .. KEYS[1])
if sem > 0 then
  redis.call("SET", semKeys[3] .. KEYS[1], "1", "PX", semKeys[4])
end
return math.min(redis.call("DEL", KEYS[1]) + sem, 1)
