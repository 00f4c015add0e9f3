-- Reads field ARGV[1] of hash KEYS[1] and the key's remaining TTL in one step.
-- Returns {value or nil, pttl in ms}.
return {redis.call("HGET", KEYS[1], ARGV[1]), redis.call("PTTL", KEYS[1])}
