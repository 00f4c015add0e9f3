-- Prelude of the scripts that write a note beside a key they just set (a lock-delay: the note
-- outlives the key by it), scripts.go puts it before them (and before notelead.lua).
-- noteAfter(key, meta, note, ms, lead, nx) writes note to meta, set to expire lead ms after key,
-- which was just set to live ms: from the key's expiry time where the server has PEXPIRETIME
-- (PXAT), so that a stall of the server between the two writes adds nothing to the lead; else
-- relative (PX ms + lead). With nx, only where meta is absent (SET NX); returns SET's reply.
-- A prelude of its own: Lua makes a closure of each function each time a script runs, so a
-- script gets only the preludes it calls (acquire.lua and the hash lock scripts need no more).
local function noteAfter(key, meta, note, ms, lead, nx)
  local at, unit, t = redis.pcall("PEXPIRETIME", key), "PX", ms + lead
  if type(at) == "number" and at > 0 then
    unit, t = "PXAT", at + lead
  end
  if nx then
    return redis.call("SET", meta, note, "NX", unit, t)
  end
  return redis.call("SET", meta, note, unit, t)
end
