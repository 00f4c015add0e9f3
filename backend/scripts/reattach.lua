-- Re-attach (LOCK.ACQUIRE ... SESSION sent by the lock's holder, on another connection or
-- replica than the one that booked it): while KEYS[1] holds ARGV[1] and its holder's window
-- is open (PTTL above the padding its note KEYS[2] records), set its TTL to ARGV[2] ms and
-- note the padding ARGV[3] and round ARGV[4], keeping the token and the note's lead over
-- the key (a lock-delay). The new round is the re-attaching connection's: the connection
-- that booked the lock before renews it and releases it at its close only while the note
-- names its own round, so once the lock moved, neither reaches it.
-- With ARGV[5] "1" (a holder's LOCK.ACQUIRE ... SESSION, not an extend), a connection-bound
-- lock (its note's round ends with "~") is refused: it is not made a session lock. Without
-- it (an extend), a fenced lock whose token is not noted yet (note "<round> <pad> 0": its
-- acquire's raise is still on its way, and notes the token only beside its own round)
-- keeps its round.
-- Returns 1 when done, else 0.
if redis.call("TYPE", KEYS[1])["ok"] ~= "string" or redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0 -- absent, another owner's, or not a string lock (a Redisson hash lock)
end
local pad, rest, round = 0, "", ARGV[4]
local note = redis.call("GET", KEYS[2])
if note then
  local r, p, t = string.match(note, "^(%S*) (%d+)(.*)$")
  pad, rest = tonumber(p) or 0, t or ""
  if ARGV[5] == "1" and r and string.sub(r, -1) == "~" then
    return 0
  end
  if ARGV[5] ~= "1" and rest == " 0" and r then
    round = r -- an extend of a fenced lock whose acquire has not noted its token yet: its raise names that round
  end
end
local ttl = redis.call("PTTL", KEYS[1])
if ttl >= 0 and ttl <= pad then
  return 0
end
local delay = 0
if note and ttl > 0 then
  delay = math.max(0, redis.call("PTTL", KEYS[2]) - ttl)
end
redis.call("PEXPIRE", KEYS[1], ARGV[2])
redis.call("SET", KEYS[2], round .. " " .. ARGV[3] .. rest, "PX", tonumber(ARGV[2]) + delay)
return 1
