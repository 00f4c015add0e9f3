-- The prelude of the scripts that mark a backend (repair.lua, marknew.lua): raiseAll raises the
-- shared counter tokenKey and every lock counter (lockCounterPrefix: quorum.LockCounterKey) the
-- set of counters listed names to at least floor (decimal digits; "0": nothing), in the step
-- that marks the backend: a lock counter a try made while the backend was unmarked (from a
-- tokenKey it had lost) starts above every token given before, as one made after does.
local function raiseAll(listed, floor)
  local f = tonumber(floor)
  if not f or f <= 0 then
    return
  end
  local function raise(k)
    if (tonumber(redis.call("GET", k) or "0") or 0) < f then
      redis.call("SET", k, floor)
    end
    redis.call("SADD", listed, k)
  end
  raise(tokenKey)
  for _, k in ipairs(redis.call("SMEMBERS", listed)) do
    if string.sub(k, 1, #lockCounterPrefix) == lockCounterPrefix then
      raise(k)
    end
  end
end
