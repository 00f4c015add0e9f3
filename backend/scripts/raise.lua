-- Raises counter KEYS[1] to at least ARGV[1] (a fencing token issued by a quorum),
-- so that every later grant on this node counts up from there, and lists it in the
-- set of counters KEYS[2]. Returns 1.
local n = tonumber(redis.call("GET", KEYS[1]) or "0")
if n == nil or n < tonumber(ARGV[1]) then
  redis.call("SET", KEYS[1], ARGV[1])
end
redis.call("SADD", KEYS[2], KEYS[1])
return 1
