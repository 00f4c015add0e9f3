-- Gives up one hold of owner ARGV[1] on hash lock KEYS[1]; ARGV[2] is the TTL in ms
-- kept while holds remain (the lock's note KEYS[2], a lock-delay, follows it: hashnote.lua).
-- With KEYS[3] (an unlock latch), the result is kept there for ARGV[3] ms and a repeated
-- call returns it instead of giving up another hold, its third element 1 where the latch
-- says released (1) and the note is still the mark ARGV[4] left (a retry has its first
-- attempt's id: the release deleted the lock here), or where it says still held (0) and the
-- owner holds the lock here. Where this deletes the hash and its
-- note names a lock-delay, a release marked ARGV[4] (its id) keeps the note, marked
-- "!<id>#<delay>" with its TTL, as delifeq.lua does: this node cannot tell whether the
-- release will succeed on a quorum, and only then is the lock free at once (unmark.lua);
-- unmarked, the note goes with the hash.
-- Returns {result, holds before, 1 if the note was kept marked}: result 1 released
-- (deleted), 0 still held, -1 held by another owner, -2 absent; holds before is -1 when
-- answered from the latch.
if #KEYS > 2 then
  local v = redis.call("GET", KEYS[3])
  if v then
    local note, mark = redis.call("GET", KEYS[2]), "!" .. (ARGV[4] or "") .. "#"
    if v == "1" and ARGV[4] and ARGV[4] ~= "" and note and string.sub(note, 1, #mark) == mark then
      return {1, -1, 1}
    end
    if v == "0" and redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
      return {0, -1, 1}
    end
    return {tonumber(v), -1, 0}
  end
end
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 0 then
  if redis.call("EXISTS", KEYS[1]) == 0 then
    return {-2, 0, 0}
  end
  return {-1, 0, 0}
end
local result, marked = 1, 0
local left = redis.call("HINCRBY", KEYS[1], ARGV[1], -1)
if left > 0 then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  followHash(KEYS[1], KEYS[2], tonumber(ARGV[2])) -- hashnote.lua
  result = 0
else
  local delay = hashDelay(redis.call("GET", KEYS[2]))
  if delay and ARGV[4] and ARGV[4] ~= "" then
    redis.call("SET", KEYS[2], "!" .. ARGV[4] .. "#" .. delay, "KEEPTTL")
    marked = 1
  elseif delay then
    redis.call("DEL", KEYS[2])
  end
  redis.call("DEL", KEYS[1])
end
if #KEYS > 2 then
  redis.call("SET", KEYS[3], result, "PX", ARGV[3])
end
return {result, left + 1, marked}
