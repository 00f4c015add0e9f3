-- Repairs a backend's fencing counters: raises each counter ARGV[2], ARGV[4], ... to at
-- least ARGV[3], ARGV[5], ... (the largest value a majority of the other backends had),
-- lists them in the set KEYS[1], and when ARGV[1] is not empty marks the backend intact
-- with marker ARGV[1] ("<run_id> <marking id>", KEYS[2], no TTL), unless a marker of the
-- same run is there: another replica marked it first, and a marker rewritten under the same
-- run tells the replicas that it was lost (a flush). Returns 1.
for i = 2, #ARGV, 2 do
  local n = tonumber(redis.call("GET", ARGV[i]) or "0") or 0
  if n < tonumber(ARGV[i + 1]) then
    redis.call("SET", ARGV[i], ARGV[i + 1])
  end
  redis.call("SADD", KEYS[1], ARGV[i])
end
local function run(marker)
  return string.match(marker, "^(%S*)")
end
if ARGV[1] ~= "" then
  local cur = redis.call("GET", KEYS[2])
  if not cur or run(cur) ~= run(ARGV[1]) then
    redis.call("SET", KEYS[2], ARGV[1])
  end
end
return 1
