-- Deletes the unlock latch KEYS[1] (a release's result kept for its retries: hashrelease.lua,
-- hashunhold.lua, hashsetholds.lua; Redisson deletes it after each unlock) unless it is not
-- one: a latch holds a release's result ("-2" to "1") with a TTL, and no lock's note KEYS[2],
-- fencing counter (listed in KEYS[3]) or semaphore KEYS[4] goes by its name.
-- Returns 1 deleted, 0 absent, -1 not a latch (left: its DEL is a force release's).
if redis.call("EXISTS", KEYS[2]) == 1 or redis.call("EXISTS", KEYS[4]) == 1
    or redis.call("SISMEMBER", KEYS[3], KEYS[1]) == 1 then
  return -1
end
local t = redis.call("TYPE", KEYS[1])["ok"]
if t == "none" then
  return 0
elseif t ~= "string" then
  return -1
end
local v = redis.call("GET", KEYS[1])
if (v ~= "1" and v ~= "0" and v ~= "-1" and v ~= "-2") or redis.call("PTTL", KEYS[1]) < 0 then
  return -1
end
return redis.call("DEL", KEYS[1])
