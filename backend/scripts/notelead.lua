-- Prelude of the scripts that set a lock's TTL again and keep its note's lead over the key
-- (a lock-delay: the note outlives the key by it), scripts.go puts it before them.
-- noteLead(key, meta, ttl) is the lead, in ms, of note meta over key (whose PTTL, read just
-- before, is ttl; nil: read here); none for a key without a TTL; less than 5 ms is none (a lock-delay is 0 or at least 10
-- ms; the key and its note are set by two calls, which a stall of the server on a busy
-- machine can set ms apart). Where the server has PEXPIRETIME (Redis 7) the lead is read from
-- the two absolute expiry times, exact however the clock moves inside the script, and the
-- second result is the instant ttl was read at (Unix ms), for expireWithNote; else from the
-- PTTLs, and nil. expireWithNote(key, meta, note, ms, lead, base) makes key live ms more and
-- writes note to meta, outliving it by lead: both from base, absolute (PEXPIREAT, PXAT), when
-- given; else relative. Before, on PTTLs read and TTLs set a moment apart, a stall of the
-- server between two of them added a few ms, kept by every extend after it: a lock without a
-- lock-delay grew one of 18 ms over 5000 extends (TestExtendsKeepNoDelay in a CI run). The
-- same calls as before but one (PEXPIRETIME of the key).
local function noteLead(key, meta, ttl)
  local lead, base
  local at = redis.pcall("PEXPIRETIME", key)
  if type(at) == "number" then
    if at <= 0 then
      return 0, nil -- a key without a TTL (or none): no note outlives it
    end
    lead = redis.call("PEXPIRETIME", meta) - at
    if ttl and ttl > 0 then
      base = at - ttl
    end
  else
    ttl = ttl or redis.call("PTTL", key)
    if ttl <= 0 then
      return 0, nil
    end
    lead = redis.call("PTTL", meta) - ttl
  end
  if lead < 5 then
    lead = 0
  end
  return lead, base
end
local function expireWithNote(key, meta, note, ms, lead, base)
  if base then
    redis.call("PEXPIREAT", key, base + ms)
    redis.call("SET", meta, note, "PXAT", base + ms + lead)
  else
    redis.call("PEXPIRE", key, ms)
    redis.call("SET", meta, note, "PX", ms + lead)
  end
end
