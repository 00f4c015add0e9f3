-- Rollback of one acquire round: delete KEYS[1] only while it holds ARGV[1] AND its note
-- KEYS[2] says round ARGV[2] wrote it. A retry of the same value by another round (through
-- another proxy replica) wrote its own note, so its lock is never removed here; nor while an
-- extend from another connection pinned its promise (KEYS[3] holds ARGV[1]: extend.lua). Such
-- a pinned lock of a session's round (a connection-bound or SESSION acquire that failed, so
-- no session renews it) loses the session's mark, as at a close (delifeq.lua): a timed lock.
-- Returns 1 when deleted, else 0.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
local note = redis.call("GET", KEYS[2])
if not note or string.sub(note, 1, #ARGV[2] + 1) ~= ARGV[2] .. " " then
  return 0
end
if redis.call("GET", KEYS[3]) == ARGV[1] then
  local mark, ttl = string.sub(ARGV[2], -1), redis.call("PTTL", KEYS[2])
  if (mark == "~" or mark == "@") and ttl > 0 then
    redis.call("SET", KEYS[2], string.sub(ARGV[2], 1, -2) .. string.sub(note, #ARGV[2] + 1), "KEEPTTL")
  end
  return 0
end
redis.call("DEL", KEYS[1], KEYS[2])
return 1
