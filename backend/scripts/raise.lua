-- Raises counter KEYS[1] to at least ARGV[1] (a fencing token issued by a quorum),
-- so that every later grant on this node counts up from there, and lists it in the
-- set of counters KEYS[2]. KEYS[3] names the round that last wrote the counter;
-- where this raise writes, it notes its round ARGV[2] there. With a lock (KEYS[4]
-- holding ARGV[3], its note KEYS[5] naming round ARGV[2]), the token is also noted
-- beside the lock (token parts: tokenpart.lua), keeping the note's TTL:
--   a fenced lock ("<round> <pad> ?<counter>", its acquire's counter tentative; " 0" from a
--   restore): ARGV[4] "?", a first raise, notes it tentative (" ?<token>") where no token is
--   noted yet or a tentative one; without ARGV[4], a last raise (the
--   acquire's second, outbid, or its confirmation of the first) notes it final
--   (" <token>") over none, a tentative one, or the same token: an acquire's last raise is
--   one token, so no node ever notes another one final for that lock;
--   ARGV[4] "fix", a lock taken without a token ("<round> <pad>"): "<round> <pad> =<token>",
--   only if no token is there yet (a token fixed on a node never changes); with ARGV[1]
--   0, nothing is written: the counter and the token fixed there are read.
-- Returns {the counter before, 1 if round ARGV[2] wrote it last, noted}: a counter
-- another round left at or above the token tells the engine to issue a larger one.
-- Noted is 1 if the fenced lock now notes the token (a first raise: any token); with "fix",
-- the token fixed beside the lock now (ARGV[1] or an earlier fixer's), 0 when none (not
-- held here, fenced).
local n = tonumber(redis.call("GET", KEYS[1]) or "0") or 0
local own = 0
if redis.call("GET", KEYS[3]) == ARGV[2] then
  own = 1
end
if n < tonumber(ARGV[1]) then
  redis.call("SET", KEYS[1], ARGV[1])
  redis.call("SET", KEYS[3], ARGV[2])
end
redis.call("SADD", KEYS[2], KEYS[1])
local noted = 0
if #KEYS > 3 and redis.call("GET", KEYS[4]) == ARGV[3] then
  local note = redis.call("GET", KEYS[5])
  local ttl = redis.call("PTTL", KEYS[5]) -- the note is rewritten only where it has a TTL, and keeps it
  if note and ttl > 0 and ARGV[4] == "fix" then
    local round, pad = string.match(note, "^(%S*) (%d+)$")
    if round == ARGV[2] and tonumber(ARGV[1]) > 0 then
      redis.call("SET", KEYS[5], note .. " =" .. ARGV[1], "KEEPTTL")
      noted = tonumber(ARGV[1])
    else
      round, pad, noted = string.match(note, "^(%S*) (%d+) =(%d+)$")
      noted = round == ARGV[2] and tonumber(noted) or 0
    end
  elseif note and ttl > 0 then
    local round, pad, rest = string.match(note, "^(%S*) (%d+)(.*)$")
    if round == ARGV[2] then
      local part, tentative = settledPart(rest)
      if ARGV[4] == "?" then
        if rest == " 0" or tentative then
          redis.call("SET", KEYS[5], round .. " " .. pad .. " ?" .. ARGV[1], "KEEPTTL")
        end
        noted = 1
      elseif rest == " 0" or tentative or part == " " .. ARGV[1] then
        -- the token as its own digits: Lua writes a number above 1e14 as 1.2e+15
        redis.call("SET", KEYS[5], round .. " " .. pad .. " " .. ARGV[1], "KEEPTTL")
        noted = 1
      end
    end
  end
end
return {n, own, noted}
