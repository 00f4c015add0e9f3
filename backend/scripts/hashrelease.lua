-- Gives up one hold of owner ARGV[1] on hash lock KEYS[1]; ARGV[2] is the TTL in ms
-- kept while holds remain. With KEYS[2] (an unlock latch), the result is kept there
-- for ARGV[3] ms and a repeated call returns it instead of giving up another hold.
-- Returns {result, holds before}: result 1 released (deleted), 0 still held, -1 held by
-- another owner, -2 absent; holds before is -1 when answered from the latch.
if #KEYS > 1 then
  local v = redis.call("GET", KEYS[2])
  if v then
    return {tonumber(v), -1}
  end
end
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 0 then
  if redis.call("EXISTS", KEYS[1]) == 0 then
    return {-2, 0}
  end
  return {-1, 0}
end
local result = 1
local left = redis.call("HINCRBY", KEYS[1], ARGV[1], -1)
if left > 0 then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  result = 0
else
  redis.call("DEL", KEYS[1])
end
if #KEYS > 1 then
  redis.call("SET", KEYS[2], result, "PX", ARGV[3])
end
return {result, left + 1}
