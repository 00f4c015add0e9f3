-- Repairs a backend's fencing counters: raises each counter ARGV[2], ARGV[4], ... to at
-- least ARGV[3], ARGV[5], ... (the largest value a majority of the other backends had),
-- lists them in the set KEYS[1], and when ARGV[1] is not empty marks the backend intact
-- for its run ARGV[1] (KEYS[2], no TTL). Returns 1.
for i = 2, #ARGV, 2 do
  local n = tonumber(redis.call("GET", ARGV[i]) or "0") or 0
  if n < tonumber(ARGV[i + 1]) then
    redis.call("SET", ARGV[i], ARGV[i + 1])
  end
  redis.call("SADD", KEYS[1], ARGV[i])
end
if ARGV[1] ~= "" then
  redis.call("SET", KEYS[2], ARGV[1])
end
return 1
