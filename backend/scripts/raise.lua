-- Raises counter KEYS[1] to at least ARGV[1] (a fencing token issued by a quorum),
-- so that every later grant on this node counts up from there, and lists it in the
-- set of counters KEYS[2]. KEYS[3] names the round that last wrote the counter;
-- where this raise writes, it notes its round ARGV[2] there. With a fenced lock
-- (KEYS[4] holding ARGV[3], its note KEYS[5] naming round ARGV[2]), the token is
-- also noted beside the lock: "<round> <pad> <token>", keeping the note's TTL.
-- Returns {the counter before, 1 if round ARGV[2] wrote it last, 1 if noted}: a
-- counter another round left at or above the token tells the engine to issue a
-- larger one.
local n = tonumber(redis.call("GET", KEYS[1]) or "0") or 0
local own = 0
if redis.call("GET", KEYS[3]) == ARGV[2] then
  own = 1
end
if n < tonumber(ARGV[1]) then
  redis.call("SET", KEYS[1], ARGV[1])
  redis.call("SET", KEYS[3], ARGV[2])
end
redis.call("SADD", KEYS[2], KEYS[1])
local noted = 0
if #KEYS > 3 and redis.call("GET", KEYS[4]) == ARGV[3] then
  local note = redis.call("GET", KEYS[5])
  local ttl = redis.call("PTTL", KEYS[5])
  if note and ttl > 0 then
    local round, pad, token = string.match(note, "^(%S*) (%d+) ?(%d*)$")
    if round == ARGV[2] then
      -- the larger as its own digits: Lua writes a number above 1e14 as 1.2e+15
      local t = ARGV[1]
      if (tonumber(token) or 0) > tonumber(ARGV[1]) then
        t = token
      end
      redis.call("SET", KEYS[5], round .. " " .. pad .. " " .. t, "PX", ttl)
      noted = 1
    end
  end
end
return {n, own, noted}
