-- The prelude of the scripts that keep leases in this server's ms: nowMS() is its clock, and
-- dropLapsed(set, leases, now) removes the members whose lease in sorted set leases ended from
-- both sorted sets, 256 at a time (a flood of them goes in turns: Lua's unpack has a limit).
local function nowMS()
  local t = redis.call("TIME")
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function dropLapsed(set, leases, now)
  local gone = redis.call("ZRANGEBYSCORE", leases, "-inf", now, "LIMIT", 0, 256)
  if #gone > 0 then
    redis.call("ZREM", set, unpack(gone))
    redis.call("ZREM", leases, unpack(gone))
  end
end
