-- Force release: delete KEYS[1] whatever it holds, its note KEYS[2] and its pin KEYS[3].
-- Returns 1 when KEYS[1] existed, else 0.
redis.call("DEL", KEYS[2], KEYS[3])
return redis.call("DEL", KEYS[1])
