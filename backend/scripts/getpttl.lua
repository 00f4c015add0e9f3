-- Reads KEYS[1]'s value and remaining TTL in one step, so both describe the same key.
-- Returns {value or nil, pttl in ms (-2 absent, -1 no expiry), 1 if KEYS[1] is a hash,
-- 2 if another type, else 0}, and with KEYS[2] (a string lock's note) two more elements:
-- the fencing token noted there, or 0, and the round that wrote the lock. A hash is a
-- reentrant lock (Redisson's layout): its value is its first field, the owner.
local t = redis.call("TYPE", KEYS[1])["ok"]
if t == "hash" then
  return {redis.call("HKEYS", KEYS[1])[1] or false, redis.call("PTTL", KEYS[1]), 1}
end
if t ~= "string" and t ~= "none" then
  return {"", redis.call("PTTL", KEYS[1]), 2}
end
if #KEYS > 1 then
  local token, round = 0, ""
  local note = redis.call("GET", KEYS[2])
  if note then
    token = tonumber(string.match(note, "^%S* %d+ (%d+)$") or "0") or 0
    round = string.match(note, "^(%S*) ") or ""
  end
  return {redis.call("GET", KEYS[1]), redis.call("PTTL", KEYS[1]), 0, token, round}
end
return {redis.call("GET", KEYS[1]), redis.call("PTTL", KEYS[1]), 0}
