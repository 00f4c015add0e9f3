-- Marks a backend of a new deployment (the operator's one-time bootstrap): only when it
-- carries no deployment marker KEYS[1] and no max-TTL record KEYS[2] (no replica has
-- seen it since it started), sets the marker to its run ARGV[1], raises each counter
-- ARGV[2], ARGV[4], ... to at least ARGV[3], ARGV[5], ... (the seed) and lists them in
-- the set of counters KEYS[3]. Returns 1 when marked, 0 when it changed nothing.
if redis.call("EXISTS", KEYS[1]) == 1 or redis.call("EXISTS", KEYS[2]) == 1 then
  return 0
end
for i = 2, #ARGV, 2 do
  local n = tonumber(redis.call("GET", ARGV[i]) or "0") or 0
  if n < tonumber(ARGV[i + 1]) then
    redis.call("SET", ARGV[i], ARGV[i + 1])
  end
  redis.call("SADD", KEYS[3], ARGV[i])
end
redis.call("SET", KEYS[1], ARGV[1])
return 1
