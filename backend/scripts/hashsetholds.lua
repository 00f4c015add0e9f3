-- Repairs a reentrant hash lock whose hold count fell behind the quorum's: sets owner
-- ARGV[1]'s holds on KEYS[1] to ARGV[2] and its TTL to ARGV[3] ms, where the owner holds it,
-- or where the key is free and has no note (never over another owner, nor inside a lock-delay,
-- as hashacquire.lua), but for the mark of release ARGV[6] (it gave up the owner's last hold
-- here while the owner kept the lock elsewhere): its note KEYS[2] follows (hashnote.lua).
-- A read-write lock (rwlock.lua) takes a reader's holds where it is read
-- too, and a writer's where only the writer's own thread holds it (it becomes "write"); the
-- holder's end becomes ARGV[3] ms from now (0: stays, and a free key is not set); ARGV[7]
-- "read" or "write" makes a free key that read-write lock.
-- With KEYS[3] (an unlock latch), where it set them, the latch records ARGV[5] for ARGV[4] ms,
-- the result the quorum answered (a refused repair claims nothing). Returns 1 when set, else 0.
local owner, ms, mode = ARGV[1], tonumber(ARGV[3]), ARGV[7] or ""
if owner == "mode" then
  return 0
end
if mode ~= "" then
  rwLoad() -- rwlock.lua
end
local rw = rwMode(KEYS[1])
if rw and RW.settle(KEYS[1], KEYS[2], RW.hs) > 0 then
  rw = rwMode(KEYS[1])
elseif rw then
  rw = nil
end
local free = redis.call("EXISTS", KEYS[1]) == 0
-- a read-write lock's holder's end: ms from now, or with ms 0 the one it has (or had: RW.settle)
local kept = (rw or mode ~= "") and ms <= 0 and tonumber(redis.call("ZSCORE", RW.hs, owner) or "0") > RW.now()
if free then
  local note, mark = redis.call("GET", KEYS[2]), "!" .. (ARGV[6] or "") .. "#"
  if note and not (ARGV[6] and ARGV[6] ~= "" and string.sub(note, 1, #mark) == mark) and not kept then
    return 0 -- a lock-delay runs; a holder whose window is open (kept) was inside it, and takes its hold back
  end
end
if rw or mode ~= "" then
  local live = ms > 0 or kept
  local ok = free and live or rw and RW.holds(KEYS[1], owner)
  if not ok and rw and live then
    if RW.writer(owner) then
      ok = true -- only the writer's own thread may hold it
      for _, f in ipairs(redis.call("HKEYS", KEYS[1])) do
        ok = ok and (f == "mode" or f .. ":write" == owner)
      end
      if ok then
        redis.call("HSET", KEYS[1], "mode", "write")
      end
    else
      ok = rw == "read" or RW.holds(KEYS[1], owner .. ":write") -- as hashacquire.lua grants a read
    end
  end
  if not ok then
    return 0
  end
  if free then
    redis.call("HSET", KEYS[1], "mode", mode)
  end
  redis.call("HSET", KEYS[1], owner, ARGV[2])
  if ms > 0 then
    RW.setEnd(RW.hs, owner, ms, false) -- a repair never ends a holder's window early
  end
  RW.settle(KEYS[1], KEYS[2], RW.hs)
elseif free or redis.call("HEXISTS", KEYS[1], owner) == 1 then
  redis.call("HSET", KEYS[1], owner, ARGV[2])
  redis.call("PEXPIRE", KEYS[1], ms)
  followHash(KEYS[1], KEYS[2], ms)
else
  return 0
end
if #KEYS > 2 then
  redis.call("SET", KEYS[3], ARGV[5], "PX", ARGV[4])
end
return 1
