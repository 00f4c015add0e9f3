-- Force release (quorum/forcerelease.go), in two steps. ARGV[1] "?" prints what a delete would
-- remove (print.lua): KEYS[1] whatever it holds, its note KEYS[2], its pin KEYS[3], a read-write
-- lock's holders (rwlock.lua) and a semaphore of that name (semKeys: quorum.SemaphoreKey's,
-- SemaphoreLeaseKey's); {1 when KEYS[1] or that semaphore exists, else 0, the print ("":
-- nothing), the semaphore's generation ("": none)}. Else ARGV[1] is the prints a quorum read,
-- space separated, and ARGV[3] the generations of the semaphore it read: those keys are
-- deleted only where they still print as one of them: a late copy never deletes a lock taken
-- after the read (its round, content or expiry differ); returns 1 when KEYS[1] or that semaphore
-- existed (and was deleted), 0 when nothing was there or only a note, -1 when something else is
-- there now (nothing deleted). A semaphore deleted leaves its tombstone (semKeys[3]) for
-- semKeys[4] ms: ARGV[3], whose generations no repair of its number brings back
-- (semaphore.lua). With ARGV[2] ("read" or "write"), only a read-write lock
-- (Redisson's RReadWriteLock: a hash with field mode) in that mode, as its live holders leave it
-- (rwlock.lua: a lock whose writer's window ended is read), is printed and deleted.
local rw, exists = ARGV[2] or "", 0
local now = lockPrint() -- print.lua
if rw ~= "" then
  if rwMode(KEYS[1]) ~= rw then
    now = "" -- not a read-write lock in that mode: nothing to delete
  end
  exists = now ~= "" and 1 or 0
else
  exists = redis.call("EXISTS", KEYS[1], semKeys[1] .. KEYS[1], semKeys[2] .. KEYS[1]) > 0 and 1 or 0
end
if ARGV[1] == "?" then
  return {exists, now, redis.call("HGET", semKeys[1] .. KEYS[1], "g") or ""}
end
if now == "" then
  return 0
end
if not printIn(now, ARGV[1]) then
  return -1
end
if rw ~= "" then
  rwFree(KEYS[2], RW.hs, "") -- a holder's lock-delay that runs is kept
  redis.call("DEL", KEYS[3], RW.hs, stampPrefix .. KEYS[1])
  return redis.call("DEL", KEYS[1])
end
redis.call("DEL", KEYS[2], KEYS[3], rwHoldersPrefix .. KEYS[1], stampPrefix .. KEYS[1])
local sem = redis.call("DEL", semKeys[1] .. KEYS[1], semKeys[2] .. KEYS[1])
if sem > 0 then
  redis.call("SET", semKeys[3] .. KEYS[1], ARGV[3], "PX", semKeys[4])
end
return math.min(redis.call("DEL", KEYS[1]) + sem, 1)
