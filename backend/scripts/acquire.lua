-- Acquire: SET KEYS[1] ARGV[1] NX PX ARGV[2]. When set, KEYS[2] notes beside it, with the
-- same TTL, the round that wrote it (ARGV[3]) and the TTL's padding in ms (ARGV[4]):
-- "<round> <pad>". A rollback compares the round; an extend reads the padding.
-- Returns 1 when set, 0 when the key exists.
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  redis.call("SET", KEYS[2], ARGV[3] .. " " .. ARGV[4], "PX", ARGV[2])
  return 1
end
return 0
