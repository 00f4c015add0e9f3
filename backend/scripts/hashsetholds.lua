-- Repairs a reentrant hash lock whose hold count fell behind the quorum's: sets owner
-- ARGV[1]'s holds on KEYS[1] to ARGV[2] and its TTL to ARGV[3] ms, where the key is free
-- or the owner holds it (never over another owner). With KEYS[2] (an unlock latch), the
-- latch records ARGV[5] for ARGV[4] ms, the result the quorum answered.
-- Returns 1 when set, else 0.
if #KEYS > 1 then
  redis.call("SET", KEYS[2], ARGV[5], "PX", ARGV[4])
end
if redis.call("EXISTS", KEYS[1]) == 0 or redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
  redis.call("HSET", KEYS[1], ARGV[1], ARGV[2])
  redis.call("PEXPIRE", KEYS[1], ARGV[3])
  return 1
end
return 0
