-- A release's second step: its first (delifeq.lua) kept a lock-delay's note KEYS[1] marked
-- "!<release id>"; once a quorum deleted the lock, the release succeeded and the lock is
-- free, so the mark is removed where it still names release ARGV[1].
-- Returns 1 when removed, else 0.
if redis.call("GET", KEYS[1]) == "!" .. ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0
