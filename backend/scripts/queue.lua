-- A lock's fair queue: KEYS[1] the waiters by ticket (a sorted set), KEYS[2] their leases
-- (waiter -> when it ends, in this server's ms). ARGV[1] says what to do:
--   tail:             the largest ticket queued, 0 when none;
--   add waiter t ms:  queue waiter with ticket t unless queued already, leased for ms; 1;
--   set waiter t ms:  the same, with ticket t even where it is queued with another; 1;
--   beat waiter ms:   renew waiter's lease; 1, or 0 when it is no longer queued;
--   del waiter [t]:   remove waiter (with t: only where its ticket is t); 1 when removed, else 0;
--   head:             the first waiter whose lease has not ended, "" when none (writes nothing).
-- Both keys live as long as the longest lease: a queue nobody renews goes.
local now = nowMS -- lapsed.lua
local function lease(waiter, ms)
  redis.call("ZADD", KEYS[2], now() + ms, waiter)
  -- never shorten: another waiter's lease may end later than this one
  for _, k in ipairs(KEYS) do
    if redis.call("PTTL", k) < ms then
      redis.call("PEXPIRE", k, ms)
    end
  end
end
local mode = ARGV[1]
if mode == "tail" then
  local last = redis.call("ZREVRANGE", KEYS[1], 0, 0, "WITHSCORES")
  return tonumber(last[2] or "0")
elseif mode == "add" or mode == "set" then
  if mode == "add" then
    redis.call("ZADD", KEYS[1], "NX", ARGV[3], ARGV[2])
  else
    redis.call("ZADD", KEYS[1], ARGV[3], ARGV[2])
  end
  lease(ARGV[2], tonumber(ARGV[4]))
  return 1
elseif mode == "beat" then
  if not redis.call("ZSCORE", KEYS[1], ARGV[2]) then
    return 0
  end
  lease(ARGV[2], tonumber(ARGV[3]))
  return 1
elseif mode == "head" then
  local t = now()
  for _, w in ipairs(redis.call("ZRANGE", KEYS[1], 0, 63)) do
    if (tonumber(redis.call("ZSCORE", KEYS[2], w)) or 0) > t then
      return w
    end
  end
  return ""
end
if ARGV[3] and tonumber(redis.call("ZSCORE", KEYS[1], ARGV[2]) or "0") ~= tonumber(ARGV[3]) then
  return 0 -- queued again since, with another ticket
end
redis.call("ZREM", KEYS[2], ARGV[2])
return redis.call("ZREM", KEYS[1], ARGV[2])
