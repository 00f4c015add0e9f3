-- Overwrites lock KEYS[1] with ARGV[1] for ARGV[2] ms, whoever holds it (ShedLock's
-- SET XX PX), noting round ARGV[3] and padding ARGV[4] in KEYS[2] as an acquire does.
-- Only a string with a TTL is a lock: any other key is left alone. With
-- ARGV[5], only a lock holding ARGV[5] is overwritten (compare-and-set).
-- Returns 1 when overwritten, else 0.
if redis.call("TYPE", KEYS[1])["ok"] == "string" and redis.call("PTTL", KEYS[1]) > 0
    and (ARGV[5] == nil or redis.call("GET", KEYS[1]) == ARGV[5]) then
  redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
  redis.call("SET", KEYS[2], ARGV[3] .. " " .. ARGV[4], "PX", ARGV[2])
  return 1
end
return 0
