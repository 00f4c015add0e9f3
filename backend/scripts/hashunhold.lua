-- Undoes hold(s) of owner ARGV[1] on hash lock KEYS[1]: one hold (rolling back a
-- grant) when ARGV[2] is "1", every hold (finishing a release) when it is "all". A hash
-- deleted here takes its note KEYS[2] (a lock-delay: hashnote.lua) with it, or with
-- ARGV[5] (a release that did not delete the lock on a quorum) marks it "!<ARGV[5]>#<delay>"
-- (hashrelease.lua), and answers 1 where it finds that mark (the release deleted the lock
-- here before); a release's mark stays for that release to remove. ARGV[2] "probe" only
-- asks that (it writes nothing, and never touches a hold: the owner may hold the lock
-- again by a later grant). With KEYS[3] (an unlock latch), the latch records ARGV[4] for
-- ARGV[3] ms, the result the quorum answered. A read-write lock (rwlock.lua) loses the owner's
-- holds, and the hash goes only with its last holder.
-- Returns 1 when the owner's holds were deleted, else 0.
local note, mark = redis.call("GET", KEYS[2]), "!" .. (ARGV[5] or "") .. "#"
local markedHere = ARGV[5] and ARGV[5] ~= "" and note and string.sub(note, 1, #mark) == mark
local holds = function()
  return ARGV[1] ~= "mode" and redis.call("TYPE", KEYS[1])["ok"] == "hash" and redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1
end
if ARGV[2] == "probe" then
  return markedHere and not holds() and 1 or 0
end
if #KEYS > 2 then
  redis.call("SET", KEYS[3], ARGV[4], "PX", ARGV[3])
end
local rw = rwMode(KEYS[1])
if rw then
  RW.settle(KEYS[1], KEYS[2], RW.hs)
end
if not holds() then
  return markedHere and 1 or 0 -- release ARGV[5] deleted it here before (its mark says so)
end
if ARGV[2] == "all" or redis.call("HINCRBY", KEYS[1], ARGV[1], -1) <= 0 then
  if rw then
    redis.call("HDEL", KEYS[1], ARGV[1]) -- its end stays in the set (RW.settle)
    if RW.settle(KEYS[1], KEYS[2], RW.hs) > 0 then
      return 1 -- other holders keep the lock
    end
  end
  if note and string.sub(note, 1, 1) == "#" then
    rwFree(KEYS[2], rw and RW.hs, ARGV[5])
  end
  redis.call("DEL", KEYS[1])
  return 1
end
if rw then
  RW.settle(KEYS[1], KEYS[2], RW.hs)
end
return 0
