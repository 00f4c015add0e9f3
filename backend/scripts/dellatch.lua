-- Deletes the unlock latch KEYS[1] (a release's string for its retries, hashrelease.lua;
-- Redisson deletes it after each unlock) unless a lock is there: a lock's note KEYS[2]
-- beside it, or a key of another type. Returns 1 deleted, 0 absent, -1 a lock (left).
if redis.call("EXISTS", KEYS[2]) == 1 then
  return -1
end
local t = redis.call("TYPE", KEYS[1])["ok"]
if t == "none" then
  return 0
elseif t ~= "string" then
  return -1
end
return redis.call("DEL", KEYS[1])
