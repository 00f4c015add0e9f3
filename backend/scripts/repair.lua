-- Repairs a backend's fencing counters: raises each counter ARGV[6], ARGV[8], ... to at
-- least ARGV[7], ARGV[9], ... (the largest value a majority of the other backends had),
-- lists them in the set KEYS[1], and when ARGV[1] is not empty marks the backend intact
-- with marker ARGV[1] ("<run_id> <marking id>", KEYS[2], no TTL), unless a marker of the
-- same run is there (another replica marked it first: a marker rewritten under the same
-- run tells the replicas that it was lost, a flush), and only where the marker is still
-- ARGV[2] ("" none), the one the engine read: one gone since was flushed, and is left for
-- the engine's next check to see. Returns 1, or 0 when the marker changed. With a marker,
-- it also raises the shared counter and every lock counter listed to at least ARGV[3] ("0":
-- none; counterfloor.lua).
-- A repair in chunks (more counters than one call carries) passes a value of its own ARGV[4]
-- with each chunk, ARGV[5] "1" with the first, and its note KEYS[3] (quorum.RepairKey): the
-- first chunk sets the note to that value (a minute at most), each later one answers 0 unless
-- the note still holds it (the backend was flushed since, and lost the chunks before: the check
-- of the marker below cannot tell, a flushed backend has none either; a repair that reused the
-- marker and started after the flush wrote another value), and the last removes it. Another
-- replica's repair of the backend at the same time has a note of its own. The counters are
-- ARGV[6] on.
local chunked = ARGV[4] ~= ""
if chunked and ARGV[5] == "1" then
  redis.call("SET", KEYS[3], ARGV[4], "PX", 60000)
elseif chunked and redis.call("GET", KEYS[3]) ~= ARGV[4] then
  return 0
end
for i = 6, #ARGV, 2 do
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
  if chunked then
    redis.call("DEL", KEYS[3])
  end
  raiseAll(KEYS[1], ARGV[3]) -- raising is never wrong: before any of the checks below
  local cur = redis.call("GET", KEYS[2]) or ""
  if cur ~= "" and run(cur) == run(ARGV[1]) then
    return 1
  end
  if cur ~= ARGV[2] then
    return 0
  end
  redis.call("SET", KEYS[2], ARGV[1])
end
return 1
