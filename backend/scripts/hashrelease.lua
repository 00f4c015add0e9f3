-- Gives up one hold of owner ARGV[1] on hash lock KEYS[1]; ARGV[2] is the TTL in ms
-- kept while holds remain (the lock's note KEYS[2], a lock-delay, follows it: hashnote.lua).
-- With KEYS[3] (an unlock latch), the result is kept there for ARGV[3] ms and a repeated
-- call returns it instead of giving up another hold, its third element 1 where the latch
-- says released (1) and the note is still the mark ARGV[4] left (a retry has its first
-- attempt's id: the release deleted the lock here), or where it says still held (0) and the
-- owner holds the lock here. Where this deletes the hash and its
-- note names a lock-delay, a release marked ARGV[4] (its id) keeps the note, marked
-- "!<id>#<delay>" with its TTL, as delifeq.lua does: this node cannot tell whether the
-- release will succeed on a quorum, and only then is the lock free at once (unmark.lua);
-- unmarked, the note goes with the hash.
-- A read-write lock (rwlock.lua) loses the owner's hold; the owner's end
-- becomes ARGV[2] ms from now while it holds it still (0: stays), and the hash is deleted only
-- when no holder is left; a writer's last hold leaves the lock read where its thread reads it.
-- ARGV[5] "read" or "write": a release of a read-write lock, which finds a plain hash lock
-- absent.
-- Returns {result, holds before, flags}: result 1 released (the owner's last hold), 0 still
-- held, -1 held by another owner, -2 absent; holds before is -1 when answered from the latch
-- (-1 - the owner's holds there now, where it says still held and the owner holds it);
-- flags 1: the note was kept marked (or, from the latch, see above), 2: other holders of a
-- read-write lock keep it here.
if #KEYS > 2 then
  local v = redis.call("GET", KEYS[3])
  if v then
    local note, mark = redis.call("GET", KEYS[2]), "!" .. (ARGV[4] or "") .. "#"
    if v == "1" and ARGV[4] and ARGV[4] ~= "" and note and string.sub(note, 1, #mark) == mark then
      return {1, -1, 1}
    end
    if v == "0" and redis.call("TYPE", KEYS[1])["ok"] == "hash" and redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
      return {0, -1 - (tonumber(redis.call("HGET", KEYS[1], ARGV[1])) or 0), 1} -- and the holds left here
    end
    return {tonumber(v), -1, 0}
  end
end
-- absent answers a lock missing here; with ARGV[6] "1" (a client whose unlock of a free lock
-- answers 1 and keeps its answer in its latch) the latch KEYS[3] is kept, as its script keeps
-- it (so that the DEL of it after the unlock answers as on Redis), saying absent (-2), not
-- released: a retry counts this node as one without the lock, never as one that gave it up
-- (review115: a "1" here let a retry answer released while a quorum held the lock).
local function absent()
  if #KEYS > 2 and ARGV[6] == "1" then
    redis.call("SET", KEYS[3], "-2", "PX", ARGV[3])
  end
  return {-2, 0, 0}
end
local rw, held, bad = rwMode(KEYS[1], ARGV[1]) -- rwlock.lua
if rw and RW.settle(KEYS[1], KEYS[2], RW.hs) == 0 then
  return absent()
elseif rw then
  held = RW.holds(KEYS[1], ARGV[1]) and 2 -- as the holders left it (2: not known to be the last hold)
end
if not rw and (ARGV[5] or "") ~= "" then
  if redis.call("EXISTS", KEYS[1]) == 0 then
    return absent()
  end
  return {-1, 0, 0} -- a plain hash lock (or another key): not this read-write lock's
end
if bad and ARGV[1] ~= "mode" then
  return bad -- a key of another type
end
if ARGV[1] == "mode" or not held then
  if redis.call("EXISTS", KEYS[1]) == 0 then
    return absent()
  end
  return {-1, 0, 0}
end
local result, flags = 1, 0
local left = 0 -- a plain lock's last hold: the hash is deleted
if held ~= 1 or rw then
  left = redis.call("HINCRBY", KEYS[1], ARGV[1], -1)
end
local ms = tonumber(ARGV[2])
if left > 0 then
  if rw then
    if ms > 0 then
      RW.setEnd(RW.hs, ARGV[1], ms, true)
    end
    RW.settle(KEYS[1], KEYS[2], RW.hs)
  else
    redis.call("PEXPIRE", KEYS[1], ms)
    followHash(KEYS[1], KEYS[2], ms) -- hashnote.lua
  end
  result = 0
else
  local others = 0
  if rw then
    redis.call("HDEL", KEYS[1], ARGV[1]) -- its end stays in the set (RW.settle)
    others = RW.settle(KEYS[1], KEYS[2], RW.hs)
  end
  if others > 0 then
    flags = 2
  else
    flags = rwFree(KEYS[2], rw and RW.hs, ARGV[4])
    redis.call("DEL", KEYS[1])
  end
end
if #KEYS > 2 then
  redis.call("SET", KEYS[3], result, "PX", ARGV[3])
end
return {result, left + 1, flags}
