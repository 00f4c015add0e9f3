-- Force release: delete KEYS[1] whatever it holds, and its note KEYS[2].
-- Returns 1 when KEYS[1] existed, else 0.
redis.call("DEL", KEYS[2])
return redis.call("DEL", KEYS[1])
