-- Compare-and-delete: remove KEYS[1] only while it still holds ARGV[1].
-- Returns 1 when deleted, 0 when the key is absent or holds another value.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0
