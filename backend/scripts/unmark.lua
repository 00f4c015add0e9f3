-- A release's second step: its first (delifeq.lua, hashrelease.lua) kept a lock-delay's note
-- KEYS[1] marked "!<release id>" (a hash lock's: "!<release id>#<delay>"); once a quorum
-- deleted the lock, the release succeeded and the lock is free, so the mark is removed where
-- it still names release ARGV[1].
-- Returns 1 when removed, else 0.
local note, mark = redis.call("GET", KEYS[1]), "!" .. ARGV[1]
if note == mark or (note and string.sub(note, 1, #mark + 1) == mark .. "#") then
  return redis.call("DEL", KEYS[1])
end
return 0
