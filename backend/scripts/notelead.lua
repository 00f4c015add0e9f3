-- Prelude of the scripts that set a lock's TTL again and keep its note's lead over the key
-- (a lock-delay: the note outlives the key by it), scripts.go puts it before them.
-- noteLead(key, meta, ttl) is the lead, in ms, of note meta over key (whose PTTL is ttl > 0);
-- less than 5 ms is none (a lock-delay is 0 or at least 10 ms; the key and its note are set
-- by two calls, which a stall of the server on a busy machine can set ms apart).
-- setNoteAfter(key, meta, note, ms, lead) writes note to meta, expiring lead ms after key,
-- whose TTL was just set to ms. Where the server has PEXPIRETIME (Redis 7) both read and
-- write the two absolute expiry times: exact, however the clock moves inside the script.
-- Before, on PTTLs read and TTLs set a moment apart, a stall of the server between two of
-- them added a few ms, kept by every extend after it: a lock without a lock-delay grew one
-- of 18 ms over 5000 extends (TestExtendsKeepNoDelay in a CI run). Without PEXPIRETIME, the
-- PTTLs.
local function noteLead(key, meta, ttl)
  local lead
  local at = redis.pcall("PEXPIRETIME", key)
  if type(at) == "number" and at > 0 then
    lead = redis.call("PEXPIRETIME", meta) - at
  else
    lead = redis.call("PTTL", meta) - ttl
  end
  if lead < 5 then
    return 0
  end
  return lead
end
local function setNoteAfter(key, meta, note, ms, lead)
  local at = redis.pcall("PEXPIRETIME", key)
  if type(at) == "number" and at > 0 then
    redis.call("SET", meta, note, "PXAT", at + lead)
  else
    redis.call("SET", meta, note, "PX", ms + lead)
  end
end
