-- Reads KEYS[1]'s value and remaining TTL in one step, so both describe the same key.
-- Returns {value or nil, pttl in ms (-2 absent, -1 no expiry)}.
return {redis.call("GET", KEYS[1]), redis.call("PTTL", KEYS[1])}
