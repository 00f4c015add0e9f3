-- Marks a backend of a new deployment (the operator's one-time bootstrap): only when it
-- carries no deployment marker KEYS[1] and no max-TTL record KEYS[2] (no replica has
-- seen it since it started), sets the marker to its run ARGV[1] and raises the shared counter
-- and every lock counter listed in the set of counters KEYS[3] to at least the seed ARGV[2]
-- (counterfloor.lua). Returns 1 when marked, 0 when it changed nothing.
if redis.call("EXISTS", KEYS[1]) == 1 or redis.call("EXISTS", KEYS[2]) == 1 then
  return 0
end
raiseAll(KEYS[3], ARGV[2])
redis.call("SET", KEYS[1], ARGV[1])
return 1
