-- Extend (Engine.Extend; Engine.ExtendRound with a round): while KEYS[1] holds ARGV[1] and its
-- holder's window is open (PTTL above the padding its note KEYS[2] records), and with a round
-- ARGV[4] (an extend on the connection that booked the session lock) only while the note
-- names that round, set its TTL to ARGV[2] ms, as PEXPIRE does. A lock a session renews (its
-- note's round ends with "~", connection-bound, or "@", SESSION) is never shortened: its
-- holder counts on it while its connection lives, and a shorter TTL could end that before the
-- session's next renewal. The lock keeps its round (an extend never moves a lock out of its
-- session: the holder's connection keeps renewing it), its token and its note's lead over the
-- key (a lock-delay); the note records the padding of the TTL set (the larger one when the
-- key keeps a longer TTL).
-- With ARGV[5] "1" (an extend from any other connection or replica) it also pins the
-- promise: KEYS[3] holds ARGV[1] for ARGV[2] ms (for a session's lock never shortened). While
-- the pin lasts, the release at the close of the connection that booked the lock
-- (delifeq.lua with a round) and the rollback of its acquire (undo.lua) leave the lock to its
-- TTL: the extend answered 1 for that window, and whichever connection closes, nobody else
-- may take the lock inside it.
-- Returns 1 when done, else 0.
if redis.call("TYPE", KEYS[1])["ok"] ~= "string" or redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0 -- absent, another owner's, or not a string lock (a Redisson hash lock)
end
local round, pad, rest = "", 0, ""
local note = redis.call("GET", KEYS[2])
if note then
  local r, p, t = string.match(note, "^(%S*) (%d+)(.*)$")
  round, pad, rest = r or "", tonumber(p) or 0, t or ""
end
if ARGV[4] ~= "" and (not note or round ~= ARGV[4]) then
  return 0 -- re-attached elsewhere: no longer this session's
end
local ttl = redis.call("PTTL", KEYS[1])
if ttl >= 0 and ttl <= pad then
  return 0 -- the holder's window is over here
end
local delay, base = 0, nil
if note and ttl > 0 then
  delay, base = noteLead(KEYS[1], KEYS[2], ttl) -- notelead.lua
end
local ms, newpad = tonumber(ARGV[2]), tonumber(ARGV[3])
local mark = string.sub(round, -1)
local renewed = mark == "~" or mark == "@"
if renewed and ttl > ms then
  ms, newpad = ttl, math.max(pad, newpad)
end
expireWithNote(KEYS[1], KEYS[2], round .. " " .. newpad .. rest, ms, delay, base)
if ARGV[5] == "1" then
  local promised = tonumber(ARGV[2])
  if not renewed or redis.call("GET", KEYS[3]) ~= ARGV[1] or redis.call("PTTL", KEYS[3]) < promised then
    redis.call("SET", KEYS[3], ARGV[1], "PX", promised)
  end
end
return 1
