-- Compare-and-delete: remove KEYS[1] (and its note KEYS[2]) only while it still holds ARGV[1]
-- (and, with a round ARGV[2], a session lock's release at its connection's close, only while
-- the note names that round: a lock its holder re-attached elsewhere is not this release's).
-- With the lock's fair queue (KEYS[3], and the waiters' leases KEYS[4]), the holder
-- ARGV[1] also leaves the queue, where it waited under its own name.
-- Returns 1 when deleted (2 when waiters are queued, to be woken), 0 when the key is
-- absent or holds another value.
local function ours()
  if ARGV[2] == nil or ARGV[2] == "" then
    return true
  end
  local note = redis.call("GET", KEYS[2])
  return note ~= false and string.sub(note, 1, #ARGV[2] + 1) == ARGV[2] .. " "
end
if redis.call("GET", KEYS[1]) == ARGV[1] and ours() then
  redis.call("DEL", KEYS[2])
  redis.call("DEL", KEYS[1])
  if #KEYS > 2 then
    redis.call("ZREM", KEYS[3], ARGV[1])
    redis.call("ZREM", KEYS[4], ARGV[1])
    if redis.call("ZCARD", KEYS[3]) > 0 then
      return 2
    end
  end
  return 1
end
return 0
