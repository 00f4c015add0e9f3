-- Raises the record KEYS[1] (no TTL) of the longest padded TTL, in ms, that any engine
-- sharing this backend may grant to at least ARGV[1]. Returns the record.
local cur = tonumber(redis.call("GET", KEYS[1]) or "0") or 0
local want = tonumber(ARGV[1])
if want > cur then
  redis.call("SET", KEYS[1], ARGV[1])
  cur = want
end
return cur
