-- Force release: delete KEYS[1] whatever it holds, its note KEYS[2], its pin KEYS[3] and a
-- read-write lock's holders KEYS[4]. With ARGV[1] ("read" or "write"), only a read-write lock
-- (Redisson's RReadWriteLock: a hash with field mode) in that mode is deleted.
-- Returns 1 when KEYS[1] existed (and was deleted), else 0.
if (ARGV[1] or "") ~= "" and (redis.call("TYPE", KEYS[1])["ok"] ~= "hash" or redis.call("HGET", KEYS[1], "mode") ~= ARGV[1]) then
  return 0
end
redis.call("DEL", KEYS[2], KEYS[3], KEYS[4])
return redis.call("DEL", KEYS[1])
