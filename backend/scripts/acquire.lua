-- Acquire: SET KEYS[1] ARGV[1] NX PX ARGV[2]. When set, KEYS[2] notes beside it the round
-- that wrote it (ARGV[3]) and the TTL's padding in ms (ARGV[4]): "<round> <pad>". A rollback
-- compares the round; an extend reads the padding. The note lives ARGV[5] ms longer than
-- the lock (its lock-delay): a note without its lock means the lock expired unreleased
-- less than its delay ago (a release deletes both), and the key is not free yet.
-- A fenced acquire also increments the token counter KEYS[3], lists it in the set of
-- counters KEYS[4] and notes the round as the counter's last writer in KEYS[5]; the
-- raise that follows notes the token beside the lock ("<round> <pad> <token>").
-- Returns 1 (fenced: the counter) when set, 0 when the key exists or is delayed.
if redis.call("EXISTS", KEYS[2]) == 1 and redis.call("EXISTS", KEYS[1]) == 0 then
  return 0
end
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  redis.call("SET", KEYS[2], ARGV[3] .. " " .. ARGV[4], "PX", tonumber(ARGV[2]) + tonumber(ARGV[5]))
  if #KEYS > 2 then
    local token = redis.call("INCR", KEYS[3])
    redis.call("SADD", KEYS[4], KEYS[3])
    redis.call("SET", KEYS[5], ARGV[3])
    return token
  end
  return 1
end
return 0
