-- Move back a re-attach its client did not see succeed (Engine.Unreattach): where KEYS[1]
-- holds ARGV[1] and its note KEYS[2] names round ARGV[2] (the re-attach's, reattach.lua), the
-- note names again the round that re-attach replaced on this backend (KEYS[3], the rounds'
-- chain; ARGV[3], the round the re-attach read, where the chain no longer has it): the
-- connection that booked that round renews the lock and releases it at its close as before.
-- The note's padding and token part, its TTL and the lock's stay as they are. Where a later
-- re-attach replaced ARGV[2] already, ARGV[2] leaves the chain instead: the later one, moved
-- back, names what ARGV[2] replaced, never a round no connection books.
-- Returns 1 when moved back, else 0.
if redis.call("TYPE", KEYS[1])["ok"] ~= "string" or redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
local note = redis.call("GET", KEYS[2])
if not note then
  return 0
end
local r, rest = string.match(note, "^(%S*)( %d+.*)$")
local prior = redis.call("HGET", KEYS[3], ARGV[2]) or ARGV[3]
redis.call("HDEL", KEYS[3], ARGV[2])
if r == ARGV[2] then
  redis.call("SET", KEYS[2], prior .. rest, "KEEPTTL")
  return 1
end
local chain = redis.call("HGETALL", KEYS[3])
for i = 1, #chain, 2 do
  if chain[i + 1] == ARGV[2] then
    redis.call("HSET", KEYS[3], chain[i], prior)
  end
end
return 0
