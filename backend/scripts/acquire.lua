-- Acquire: SET KEYS[1] ARGV[1] NX PX ARGV[2]. When set, KEYS[2] notes beside it, with the
-- same TTL, the round that wrote it (ARGV[3]) and the TTL's padding in ms (ARGV[4]):
-- "<round> <pad>". A rollback compares the round; an extend reads the padding.
-- A fenced acquire also increments the token counter KEYS[3], lists it in the set of
-- counters KEYS[4] and notes the round as the counter's last writer in KEYS[5]; the
-- raise that follows notes the token beside the lock ("<round> <pad> <token>").
-- Returns 1 (fenced: the counter) when set, 0 when the key exists.
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  redis.call("SET", KEYS[2], ARGV[3] .. " " .. ARGV[4], "PX", ARGV[2])
  if #KEYS > 2 then
    local token = redis.call("INCR", KEYS[3])
    redis.call("SADD", KEYS[4], KEYS[3])
    redis.call("SET", KEYS[5], ARGV[3])
    return token
  end
  return 1
end
return 0
