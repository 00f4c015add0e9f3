-- Move back a re-attach its client did not see succeed (Engine.Unreattach): where KEYS[1]
-- holds ARGV[1] and its note KEYS[2] names round ARGV[2] (the re-attach's, reattach.lua), the
-- note names ARGV[3] (the round it moved the lock from) again: the connection that booked the
-- lock before renews it and releases it at its close as before. The note's padding and token
-- part, its TTL and the lock's stay as they are. A note that names another round (a later
-- re-attach's) is left alone.
-- Returns 1 when moved back, else 0.
if redis.call("TYPE", KEYS[1])["ok"] ~= "string" or redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
local note = redis.call("GET", KEYS[2])
if not note then
  return 0
end
local r, rest = string.match(note, "^(%S*)( %d+.*)$")
if r ~= ARGV[2] then
  return 0
end
redis.call("SET", KEYS[2], ARGV[3] .. rest, "KEEPTTL")
return 1
