-- Re-attach (LOCK.ACQUIRE ... SESSION sent by the lock's holder, on another connection or
-- replica than the one that booked it): while KEYS[1] holds ARGV[1] and its holder's window
-- is open (PTTL above the padding its note KEYS[2] records), make it live at least ARGV[2] ms
-- (never shorter: an extend may have promised a longer window, extend.lua) and note the
-- padding ARGV[3] (the larger one when the key keeps a longer TTL) and round ARGV[4], keeping
-- the token and the note's lead over the key (a lock-delay). The new round is the
-- re-attaching connection's: the connection that booked the lock before renews it and
-- releases it at its close only while the note names its own round, so once the lock moved,
-- neither reaches it. A connection-bound lock (its note's round ends with "~") is refused: it
-- is not made a session lock. Only a lock whose note carries exactly the token ARGV[5] ("" none,
-- "<token>" a fenced acquire's, "=<token>" fixed) moves: the one Q holders were read to agree
-- on (Engine.Reattach), final or (the engine read it final on other holders of the round)
-- tentative: it moves as final (tokenpart.lua). A raise still on its way notes its token only
-- beside its own round, so a holder that moves keeps the final token for good.
-- Re-attach rounds are ordered: one moves no backend a later one moved.
-- Returns 1 when done, else 0.
if redis.call("TYPE", KEYS[1])["ok"] ~= "string" or redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0 -- absent, another owner's, or not a string lock (a Redisson hash lock)
end
local pad, rest = 0, ""
local note = redis.call("GET", KEYS[2])
if note then
  local r, p, t = string.match(note, "^(%S*) (%d+)(.*)$")
  local part, tent = settledPart(t or "")
  pad, rest = tonumber(p) or 0, tent and " " .. tent or part
  if r and string.sub(r, -1) == "~" then
    return 0
  end
  -- Re-attach rounds are ordered (roundorder.lua): a backend moves only to a round not below
  -- its own, so when two re-attaches of the lock race (through two replicas) each backend
  -- ends naming the later request of those that reached it, never two and two.
  if roundBefore(ARGV[4], r) then
    return 0 -- a later request's re-attach moved it: it stays that one's
  end
end
if rest ~= (ARGV[5] == "" and "" or " " .. ARGV[5]) then
  return 0 -- another token than the settled one: a raise landed here since
end
local ttl = redis.call("PTTL", KEYS[1])
if ttl >= 0 and ttl <= pad then
  return 0
end
local delay, base = 0, nil
if note and ttl > 0 then
  delay, base = noteLead(KEYS[1], KEYS[2], ttl) -- notelead.lua
end
local ms, newpad = tonumber(ARGV[2]), tonumber(ARGV[3])
if ttl > ms then
  ms, newpad = ttl, math.max(pad, newpad)
end
expireWithNote(KEYS[1], KEYS[2], ARGV[4] .. " " .. newpad .. rest, ms, delay, base)
return 1
