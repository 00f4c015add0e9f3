-- Sets hash lock KEYS[1]'s TTL to ARGV[2] ms while owner ARGV[1] holds it; its note KEYS[2]
-- (a lock-delay) follows (hashnote.lua).
-- Returns 1 when extended, 0 when the owner does not hold it.
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  followHash(KEYS[1], KEYS[2], tonumber(ARGV[2]))
  return 1
end
return 0
