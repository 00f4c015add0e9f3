-- Compare-and-extend, for each lock i (one or many: a session's batched renewal): set
-- KEYS[2i-1]'s TTL to ARGV[4i-2] ms only while it holds ARGV[4i-3] and its holder's window
-- is still open. The key's TTL was padded for clock drift by the amount its note KEYS[2i]
-- ("<round> <pad>[ <token>]") records; once PTTL is down to that padding the holder's
-- window is over, as on one Redis the key would be gone. With a round ARGV[4i] (a session
-- lock's renewal), only while the note names that round: a lock its holder re-attached
-- elsewhere (reattach.lua) is no longer this renewer's. The note then records ARGV[4i-1],
-- the new padding, keeps a fenced lock's token, and keeps outliving the key by as much
-- as it did (a lock-delay). With one more ARGV (a session's renewal: the lock-delay in ms;
-- "-" when the engine asks for no restore: it asks only where a quorum still held the lock), a lock
-- whose key and note are both absent here (never over another owner's key, nor during a
-- lock-delay, whose note outlives its key) is set again with the same padded TTL, noted
-- as a fenced lock's (round ARGV[4i], token 0: the holders that kept it keep the token),
-- its note outliving the key by the lock-delay as an acquire's does;
-- it is not counted in this renewal, only in the next ones that find it held.
-- A session's renewal never shortens a TTL: a lock an extend set further out keeps it.
-- Returns, per lock, 1 when extended, else 0.
local renewal = #ARGV % 4 == 1
local restore = renewal and ARGV[#ARGV] ~= "-"
local restoreDelay = restore and tonumber(ARGV[#ARGV]) or 0
local out = {}
for i = 1, #KEYS / 2 do
  local key, meta = KEYS[2 * i - 1], KEYS[2 * i]
  local value, ms, newpad, want = ARGV[4 * i - 3], tonumber(ARGV[4 * i - 2]), ARGV[4 * i - 1], ARGV[4 * i]
  out[i] = 0
  if redis.call("GET", key) == value then
    local round, pad, rest = "", 0, ""
    local note = redis.call("GET", meta)
    if note then
      local r, p, t = string.match(note, "^(%S*) (%d+)(.*)$")
      round, pad, rest = r or "", tonumber(p) or 0, t or ""
    end
    local ttl = redis.call("PTTL", key)
    if (ttl < 0 or ttl > pad) and (want == "" or (note and round == want)) then
      local delay = 0
      if note and ttl > 0 then
        delay = math.max(0, redis.call("PTTL", meta) - ttl)
      end
      if renewal and ttl > ms then
        ms = ttl
      end
      redis.call("PEXPIRE", key, ms)
      redis.call("SET", meta, round .. " " .. newpad .. rest, "PX", ms + delay)
      out[i] = 1
    end
  elseif restore and redis.call("EXISTS", key) == 0 and redis.call("EXISTS", meta) == 0 then
    redis.call("SET", key, value, "PX", ms)
    redis.call("SET", meta, want .. " " .. newpad .. " 0", "PX", ms + restoreDelay)
  end
end
return out
