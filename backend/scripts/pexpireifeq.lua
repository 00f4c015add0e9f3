-- A session's renewal (Engine.Renew), for each lock i (a batch: one script per 128 due locks;
-- ARGV in fives per lock, value, ms, padding, round, granted, s = 5i-5 below; a restore's in
-- sixes, with the token part of the lock's note sixth, s = 6i-6):
-- make KEYS[2i-1] live at least ARGV[s+2] ms only while it holds ARGV[s+1] and its holder's
-- window is still open. The key's TTL was padded for clock drift by the amount its note
-- KEYS[2i] ("<round> <pad>[ <token>]") records; once PTTL is down to that padding the holder's
-- window is over, as on one Redis the key would be gone. With a round ARGV[s+4], only while
-- the note names that round: a lock its holder re-attached elsewhere (reattach.lua) is no
-- longer this renewer's. A renewal never shortens a TTL: a lock an extend or a re-attach set
-- further out keeps it, and its note the larger padding. The note then records the padding,
-- keeps its round and a fenced lock's token, and keeps outliving the key by as much as it
-- did (a lock-delay). Granted ARGV[s+5] is the fencing token the lock's grant answered its
-- holder ("0": none known): a note of the lease's round that holds a token tentative (the
-- grant's confirmation did not land here, tokenpart.lua: its acquire's own counter, or its
-- first raise's token) notes it final. Granted is the grant's answer, the one token its round
-- ever makes final (a re-attach's round notes its token final at once), as the grant's last
-- raise or confirmation would have, over any tentative one (raise.lua).
-- The last ARGV is the restore's lock-delay in ms for fenced locks (the one before it, for the
-- others: restoreDelay below), or "-" when the engine asks for no restore
-- (it asks only where a quorum still held the lock, quorum/renew.go restore): a lock whose key
-- and note are both absent here, or whose key is absent and whose note names the lease's own
-- round (never over another owner's key, nor during another lock's lock-delay, whose note
-- outlives its key) is set again with the same padded TTL, noted with round
-- ARGV[s+4] and the token part ARGV[s+6] the engine read Q holders agree on in the renewal
-- before, or its grant's token ("" none, "<token>", "=<token>"; "0", a fenced lock's without
-- its token, when neither is known: the holders that kept it keep the token), its note
-- outliving the key by the
-- lock-delay as an acquire's does; it is not counted in this renewal, only in the next ones
-- that find it held.
-- Returns, per lock, "+" and the token part of its note (" <token>", " =<token>", nothing,
-- " 0" for none yet, or " ?<token>" tentative: it counts only beside the same token final,
-- tokenpart.lua) when extended, else 0.
-- earlierOfLock: a note of round r with token part rest is of the lease's lock under an
-- earlier round (roundorder.lua): the lock's own token (one token, one lock), the one its
-- grant answered (granted, final), or in a restore the token part Q holders of the lease's
-- round agree on (token).
local function earlierOfLock(r, rest, want, granted, token)
  return want ~= "" and r ~= nil and roundBefore(r, want) and
    (granted ~= "0" and rest == " " .. granted or token ~= "0" and token ~= "" and rest == " " .. token)
end
-- ownNote: the note meta outlives its key (a lock-delay) and is the lease's own lock's: it
-- names round want, or an earlier round of the lock: a backend paused past the TTL, or one a
-- re-attach missed and whose key then expired, while Q holders kept the lock. Its
-- lock-delay keeps other owners out, not the lock's own restore.
local function ownNote(meta, want, granted, token)
  local note = redis.call("GET", meta)
  if want == "" or not note then
    return false
  end
  local r, rest = string.match(note, "^(%S*) %d+(.*)$")
  return r == want or earlierOfLock(r, rest, want, granted, token)
end
local restore = ARGV[#ARGV] ~= "-"
-- A restore's lock-delay: the native locks' (LOCK.ACQUIRE's, fenced: a token part "<token>"
-- or "0") last, the other locks' (SET NX PX's, and SET NX's bound to their connection: no
-- token part, or one fixed by a read, "=<token>") before it. helper-76: one delay for all
-- restored a bound lock with the native locks' lock-delay, shorter than its own.
local nativeDelay = restore and tonumber(ARGV[#ARGV]) or 0
local plainDelay = restore and tonumber(ARGV[#ARGV - 1]) or 0
local function restoreDelay(round, token)
  if string.sub(round, -1) == "~" or token == "" or string.sub(token, 1, 1) == "=" then
    return plainDelay
  end
  return nativeDelay
end
local stride = restore and 6 or 5
local out = {}
for i = 1, #KEYS / 2 do
  local key, meta = KEYS[2 * i - 1], KEYS[2 * i]
  local s = stride * (i - 1)
  local value, ms, newpad, want, granted = ARGV[s + 1], tonumber(ARGV[s + 2]), ARGV[s + 3], ARGV[s + 4], ARGV[s + 5]
  out[i] = 0
  if redis.call("GET", key) == value then
    local round, pad, rest = "", 0, ""
    local note = redis.call("GET", meta)
    if note then
      local r, p, t = string.match(note, "^(%S*) (%d+)(.*)$")
      round, pad, rest = r or "", tonumber(p) or 0, t or ""
      if want ~= "" and round == want and granted ~= "0" and string.match(rest, "^ %?%d+$") then
        rest = " " .. granted -- the token its grant answered, confirmed where the grant's confirmation missed
      end
    end
    local ttl = redis.call("PTTL", key)
    -- The lease adopts its lock where its re-attach did not reach (a backend paused or cut
    -- off then): the note names an earlier round of it, so it moves to the lease's round as
    -- reattach.lua would have moved it, and counts as held, which it is.
    local adopt = note and earlierOfLock(round, rest, want, granted, restore and ARGV[s + 6] or "0")
    if (ttl < 0 or ttl > pad) and (want == "" or (note and round == want) or adopt) then
      round = want ~= "" and want or round
      local delay, base = 0, nil
      if note and ttl > 0 then
        delay, base = noteLead(key, meta, ttl) -- notelead.lua
      end
      if ttl > ms then
        ms, newpad = ttl, math.max(pad, tonumber(newpad))
      end
      expireWithNote(key, meta, round .. " " .. newpad .. rest, ms, delay, base)
      out[i] = "+" .. rest
    end
  elseif restore and redis.call("EXISTS", key) == 0 and (redis.call("EXISTS", meta) == 0 or ownNote(meta, want, granted, ARGV[s + 6])) then
    -- The note outlives the key by the lock's lock-delay, and never expires sooner than the
    -- own note it replaces did (its PTTL read before the key is set).
    local token, old = ARGV[s + 6], redis.call("PTTL", meta)
    redis.call("SET", key, value, "PX", ms)
    local lead = math.max(restoreDelay(want, token), old - ms)
    if token ~= "" then
      token = " " .. token
    end
    noteAfter(key, meta, want .. " " .. newpad .. token, ms, lead) -- noteafter.lua
  end
end
return out
