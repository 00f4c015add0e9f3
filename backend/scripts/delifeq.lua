-- Compare-and-delete: remove KEYS[1] (and its note KEYS[2]) only while it still holds ARGV[1].
-- Returns 1 when deleted, 0 when the key is absent or holds another value.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("DEL", KEYS[2])
  return redis.call("DEL", KEYS[1])
end
return 0
