-- Overwrites lock KEYS[1] with ARGV[1] for ARGV[2] ms, whoever holds it (ShedLock's
-- SET XX PX), noting round ARGV[3] and padding ARGV[4] in KEYS[2] as an acquire does.
-- Where the lock already holds ARGV[1] (its holder keeping it), the note keeps its round
-- and the token given to the lock (a fenced acquire's or one a first token read fixed):
-- one lock, one token; and it keeps outliving the key by as much as it did (a lock-delay).
-- A lock a session renews (its round ends with "~" or "@") is never shortened, as by an
-- extend (extend.lua): its holder counts on it while its connection lives.
-- Keeping the round keeps a connection-bound lock in its session, so an overwrite from
-- any other connection than the one whose round the note names (ARGV[5]: the round the
-- sending connection booked, "" when none) also pins its promise as an extend from
-- elsewhere does (extend.lua): KEYS[3] holds ARGV[1] for exactly ARGV[2] ms, and
-- the release at the close of the booking connection leaves the lock to the TTL this
-- overwrite answered OK for. An overwrite with another value ends the old holder's lock: its
-- pin, which names the old value, goes with it.
-- Only a string with a TTL is a lock: any other key is left alone. With ARGV[6] (not ""), only
-- a lock holding ARGV[6] is overwritten (compare-and-set). An overwrite with another value is a
-- new holder's lock: its note outlives it by ARGV[7] ms (its lock-delay, as acquire.lua's).
-- Without ARGV[6], ARGV[8] is the prints a quorum read just before (print.lua): a lock is
-- overwritten only where it still prints as one of them, so a late copy never overwrites a
-- lock taken since by another client.
-- Returns 1 when overwritten, else 0.
if redis.call("TYPE", KEYS[1])["ok"] == "string" and redis.call("PTTL", KEYS[1]) > 0
    and (ARGV[6] == "" and printIn(lockPrint(), ARGV[8]) or ARGV[6] ~= "" and redis.call("GET", KEYS[1]) == ARGV[6]) then
  local note, delay, base, same = ARGV[3] .. " " .. ARGV[4], 0, nil, redis.call("GET", KEYS[1]) == ARGV[1]
  local ms, renewed, noteRound = tonumber(ARGV[2]), false, nil
  if same then
    local old = redis.call("GET", KEYS[2])
    if old then
      local round, pad, rest = string.match(old, "^(%S*) (%d+)(.*)$")
      if round then
        noteRound = round
        local ttl = redis.call("PTTL", KEYS[1])
        local mark = string.sub(round, -1)
        local newpad = ARGV[4]
        renewed = mark == "~" or mark == "@"
        if renewed and ttl > ms then
          ms, newpad = ttl, math.max(tonumber(pad), tonumber(ARGV[4])) -- a session's lock: never shortened, as by an extend
        end
        note = round .. " " .. newpad .. rest
        delay, base = noteLead(KEYS[1], KEYS[2], ttl) -- notelead.lua
      end
    end
  end
  if same then -- the same value: SET ... PX is PEXPIRE
    expireWithNote(KEYS[1], KEYS[2], note, ms, delay, base)
  else
    redis.call("SET", KEYS[1], ARGV[1], "PX", ms)
    noteAfter(KEYS[1], KEYS[2], note, ms, tonumber(ARGV[7])) -- noteafter.lua
  end
  if not same then
    redis.call("DEL", KEYS[3])
  elseif (ARGV[5] == "" or ARGV[5] ~= noteRound) and not (renewed and redis.call("GET", KEYS[3]) == ARGV[1]
      and redis.call("PTTL", KEYS[3]) >= tonumber(ARGV[2])) then
    redis.call("SET", KEYS[3], ARGV[1], "PX", ARGV[2]) -- a session's pin never shortened
  end
  return 1
end
return 0
