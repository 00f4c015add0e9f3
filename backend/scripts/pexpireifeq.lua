-- Compare-and-extend: set KEYS[1]'s TTL to ARGV[2] ms only while it holds ARGV[1] and its
-- holder's window is still open. The key's TTL was padded for clock drift by the amount
-- its note KEYS[2] ("<round> <pad>[ <token>]") records; once PTTL is down to that padding
-- the holder's window is over, as on one Redis the key would be gone. The note then
-- records ARGV[3], the new padding, and keeps a fenced lock's token. Returns 1 when
-- extended, else 0.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
local round, pad, rest = "", 0, ""
local note = redis.call("GET", KEYS[2])
if note then
  local r, p, t = string.match(note, "^(%S*) (%d+)(.*)$")
  round, pad, rest = r or "", tonumber(p) or 0, t or ""
end
local ttl = redis.call("PTTL", KEYS[1])
if ttl >= 0 and ttl <= pad then
  return 0
end
redis.call("PEXPIRE", KEYS[1], ARGV[2])
redis.call("SET", KEYS[2], round .. " " .. ARGV[3] .. rest, "PX", ARGV[2])
return 1
