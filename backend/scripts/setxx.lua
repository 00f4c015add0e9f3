-- Overwrites lock KEYS[1] with ARGV[1] for ARGV[2] ms, whoever holds it (ShedLock's
-- SET XX PX), noting round ARGV[3] and padding ARGV[4] in KEYS[2] as an acquire does.
-- Where the lock already holds ARGV[1] (its holder keeping it), the note keeps its round
-- and the token given to the lock (a fenced acquire's or one a first token read fixed):
-- one lock, one token; and it keeps outliving the key by as much as it did (a lock-delay).
-- Only a string with a TTL is a lock: any other key is left alone. With ARGV[5], only a
-- lock holding ARGV[5] is overwritten (compare-and-set).
-- Returns 1 when overwritten, else 0.
if redis.call("TYPE", KEYS[1])["ok"] == "string" and redis.call("PTTL", KEYS[1]) > 0
    and (ARGV[5] == nil or redis.call("GET", KEYS[1]) == ARGV[5]) then
  local note, delay = ARGV[3] .. " " .. ARGV[4], 0
  if redis.call("GET", KEYS[1]) == ARGV[1] then
    local old = redis.call("GET", KEYS[2])
    if old then
      local round, rest = string.match(old, "^(%S*) %d+(.*)$")
      if round then
        note = round .. " " .. ARGV[4] .. rest
        delay = math.max(0, redis.call("PTTL", KEYS[2]) - redis.call("PTTL", KEYS[1]))
      end
    end
  end
  redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
  redis.call("SET", KEYS[2], note, "PX", tonumber(ARGV[2]) + delay)
  return 1
end
return 0
