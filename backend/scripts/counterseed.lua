-- The start of a lock's own fencing counter (quorum.LockCounterKey) on a node that lacks it
-- (hashacquire.lua): the shared counter tokenKey's value, or, where larger, the counter a
-- replica before LockCounterKey kept under the client's name (counterPrefix stripped) if the
-- set of counters lists that name (a floor only: nothing here writes it). A value is taken
-- only as decimal digits below 2^53 (exact as a Lua number); anything else counts 0.
local function counterValue(key)
  if redis.call("TYPE", key)["ok"] ~= "string" then
    return "0"
  end
  local v = redis.call("GET", key)
  if string.match(v, "^%d+$") and #v <= 16 and tonumber(v) < 9007199254740992 then
    return v
  end
  return "0"
end

local function counterSeed(counter, listed)
  local seed = counterValue(tokenKey)
  local old = string.sub(counter, #counterPrefix + 1)
  if redis.call("SISMEMBER", listed, old) == 1 then
    local v = counterValue(old)
    if tonumber(v) > tonumber(seed) then
      seed = v
    end
  end
  return seed
end
