-- Repairs a reentrant hash lock whose hold count fell behind the quorum's: sets owner
-- ARGV[1]'s holds on KEYS[1] to ARGV[2] and its TTL to ARGV[3] ms, where the key is free
-- or the owner holds it (never over another owner); its note KEYS[2] (a lock-delay, or a
-- release's mark where the release took the hash from this node) follows (hashnote.lua).
-- With KEYS[3] (an unlock latch), the latch records ARGV[5] for ARGV[4] ms, the result the
-- quorum answered. Returns 1 when set, else 0.
if #KEYS > 2 then
  redis.call("SET", KEYS[3], ARGV[5], "PX", ARGV[4])
end
if redis.call("EXISTS", KEYS[1]) == 0 or redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
  redis.call("HSET", KEYS[1], ARGV[1], ARGV[2])
  redis.call("PEXPIRE", KEYS[1], ARGV[3])
  followHash(KEYS[1], KEYS[2], tonumber(ARGV[3]))
  return 1
end
return 0
