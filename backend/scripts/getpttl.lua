-- Reads KEYS[1]'s value and remaining TTL in one step, so both describe the same key.
-- Returns {value or nil, pttl in ms (-2 absent, -1 no expiry), 1 if KEYS[1] is a hash,
-- 2 if another type, else 0}, and with KEYS[2] (a string lock's note) four more elements:
-- the fencing token noted there, or 0, and the round that wrote the lock; how the
-- token was given: 0 none ("<round> <pad>"), 1 by a fenced acquire ("<round> <pad> <token>",
-- 0 until its last raise made one final), 2 fixed by a first token read
-- ("<round> <pad> =<token>"); and 1 if the token is tentative (tokenpart.lua: the token
-- given is then the tentative one, which counts only beside a final one), else 0. A hash is a
-- reentrant lock (Redisson's layout): its value is its first field, the owner.
local t = redis.call("TYPE", KEYS[1])["ok"]
if t == "hash" then
  return {redis.call("HKEYS", KEYS[1])[1] or false, redis.call("PTTL", KEYS[1]), 1}
end
if t ~= "string" and t ~= "none" then
  return {"", redis.call("PTTL", KEYS[1]), 2}
end
if #KEYS > 1 then
  local token, round, kind, tentative = 0, "", 0, 0
  local note = redis.call("GET", KEYS[2])
  if note then
    local part
    round, part = string.match(note, "^(%S*) %d+(.*)$")
    local tent
    part, tent = settledPart(part or "")
    if tent then
      part, tentative = " " .. tent, 1
    end
    local fixed, t = string.match(part, "^ (=?)(%d+)$")
    if t then
      token, kind = tonumber(t) or 0, 1
      if fixed == "=" then
        kind = 2
      end
    end
    round = round or ""
  end
  return {redis.call("GET", KEYS[1]), redis.call("PTTL", KEYS[1]), 0, token, round, kind, tentative}
end
return {redis.call("GET", KEYS[1]), redis.call("PTTL", KEYS[1]), 0}
