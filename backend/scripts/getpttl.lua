-- Reads KEYS[1]'s value and remaining TTL in one step, so both describe the same key.
-- Returns {value or nil, pttl in ms (-2 absent, -1 no expiry), 1 if KEYS[1] is a hash}.
-- A hash is a reentrant lock (Redisson's layout): its value is its first field, the owner.
local t = redis.call("TYPE", KEYS[1])["ok"]
if t == "hash" then
  return {redis.call("HKEYS", KEYS[1])[1] or false, redis.call("PTTL", KEYS[1]), 1}
end
if t ~= "string" and t ~= "none" then
  return {"", redis.call("PTTL", KEYS[1]), 2}
end
return {redis.call("GET", KEYS[1]), redis.call("PTTL", KEYS[1]), 0}
