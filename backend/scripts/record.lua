-- Raises the record KEYS[1] (no TTL) of the longest padded TTL, in ms, that any engine
-- sharing this backend may grant to at least ARGV[1], and writes the calling engine's
-- presence KEYS[2] (PX ARGV[2]). Returns the record, and 1 when the presence was there
-- before (0: this engine never checked this backend, or the backend lost it: a flush).
local cur = tonumber(redis.call("GET", KEYS[1]) or "0") or 0
local want = tonumber(ARGV[1])
if want > cur then
  redis.call("SET", KEYS[1], ARGV[1])
  cur = want
end
local had = redis.call("EXISTS", KEYS[2])
redis.call("SET", KEYS[2], "1", "PX", ARGV[2])
return {cur, had}
