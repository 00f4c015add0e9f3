-- The start of a lock's own fencing counter (quorum.LockCounterKey) on a node that lacks it
-- (hashacquire.lua): the shared counter tokenKey's value (every marking seeds it from the clock,
-- quorum/fencingdoc.go), as decimal digits below 2^53 (exact as a Lua number), else 0. Nothing a
-- client can write is read: not the key the client named, nor an earlier version's counter there.
local function counterSeed()
  local v = redis.call("GET", tokenKey)
  if v and string.match(v, "^%d+$") and #v <= 16 and tonumber(v) < 9007199254740992 then
    return v
  end
  return "0"
end
