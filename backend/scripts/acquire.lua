-- Acquire: SET KEYS[1] ARGV[1] NX PX ARGV[2]. When set, KEYS[2] notes beside it the round
-- that wrote it (ARGV[3]) and the TTL's padding in ms (ARGV[4]): "<round> <pad>". A rollback
-- compares the round; an extend reads the padding. The note lives ARGV[5] ms longer than
-- the lock (its lock-delay): a note without its lock means the lock expired unreleased
-- less than its delay ago (a release deletes both), and the key is not free yet. The note's
-- expiry is set from the key's (noteAfter): it outlives the key by exactly the delay.
-- A fenced acquire also increments the token counter KEYS[3], lists it in the set of
-- counters KEYS[4] and notes the round as the counter's last writer in KEYS[5], and notes
-- the counter beside the lock as its token, tentative ("<round> <pad> ?<counter>",
-- tokenpart.lua): where Q holders' counters agree it is the grant's token (quorum/doc.go),
-- else a raise notes the token; the grant's last raise or confirmation makes it final.
-- The lock's queue of waiters by ticket is the last key but one of a fair acquire (KEYS[6],
-- KEYS[7] their leases) and the last key of the others (KEYS[3], fenced KEYS[6]).
-- A fair acquire first purges waiters whose lease ended, and sets only when the queue is
-- empty or its head is waiter ARGV[6]. Any other acquire is refused while the queue
-- exists (it lives as long as its longest lease): it is nobody's turn but a waiter's.
-- Returns 1 (fenced: the counter) when set. Else 0, or for a fair acquire minus the ms
-- until a retry may succeed: the holder's TTL and delay (at most 250 ms for a release's
-- mark), or the head waiter's lease.
local fenced, fair = #KEYS > 3, #KEYS > 6
local now = 0
if not fair and redis.call("EXISTS", KEYS[#KEYS]) == 1 then
  return 0
end
if fair then
  now = nowMS() -- lapsed.lua
  dropLapsed(KEYS[6], KEYS[7], now)
  local head = redis.call("ZRANGE", KEYS[6], 0, 0)[1]
  if head and head ~= ARGV[6] then
    local ends = tonumber(redis.call("ZSCORE", KEYS[7], head)) or now
    return -math.max(1, ends - now)
  end
end
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  -- The note is set only if none is left: one left means a lock-delay runs (the lock expired
  -- unreleased), and the lock just set is taken back. The common path costs no extra call.
  -- A fenced lock's note says so at once, its token tentative: a first token read never
  -- fixes another token for it, and a read waits for the final one (quorum/read.go).
  local note, token = ARGV[3] .. " " .. ARGV[4], 0
  if fenced then
    token = redis.call("INCR", KEYS[3])
    -- the token as its own digits: Lua writes a number above 1e14 as 1.2e+15
    note = note .. " ?" .. string.format("%.0f", token)
  end
  if noteAfter(KEYS[1], KEYS[2], note, tonumber(ARGV[2]), tonumber(ARGV[5]), true) then -- noteafter.lua
    if fenced then
      redis.call("SADD", KEYS[4], KEYS[3])
      redis.call("SET", KEYS[5], ARGV[3])
      return token
    end
    return 1
  end
  if fenced then
    redis.call("DECR", KEYS[3]) -- in the same script: no one saw the increment
  end
  redis.call("DEL", KEYS[1])
end
if fair then
  local wait = math.max(1, redis.call("PTTL", KEYS[1]), redis.call("PTTL", KEYS[2]))
  local note = redis.call("GET", KEYS[2])
  if note and string.sub(note, 1, 1) == "!" then
    -- A release's mark (delifeq.lua): its release removes it once it succeeded, at once or
    -- a little later (a lost or late answer), and it stays its TTL only if it failed.
    wait = math.min(wait, 250)
  end
  return -wait
end
return 0
