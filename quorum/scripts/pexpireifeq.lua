-- Compare-and-extend: set KEYS[1]'s TTL to ARGV[2] ms only while it holds ARGV[1].
-- Returns 1 when extended, 0 when the key is absent or holds another value.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0
