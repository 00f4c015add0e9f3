-- Raises the record KEYS[1] (no TTL) of the longest padded TTL, in ms, that any engine
-- sharing this backend may grant to at least ARGV[1], and sets the calling engine's
-- presence KEYS[2] to ARGV[3] (its check's sequence number, PX ARGV[2]). Returns the record
-- and the presence's value before (0: none: this engine never checked this backend, or the
-- backend lost it: a flush; one below the engine's last: restored from an older copy).
local cur = tonumber(redis.call("GET", KEYS[1]) or "0") or 0
local want = tonumber(ARGV[1])
if want > cur then
  redis.call("SET", KEYS[1], ARGV[1])
  cur = want
end
local prev = tonumber(redis.call("GET", KEYS[2]) or "0") or 0
redis.call("SET", KEYS[2], ARGV[3], "PX", ARGV[2])
return {cur, prev}
