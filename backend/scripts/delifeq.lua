-- Compare-and-delete: remove KEYS[1] (and its note KEYS[2]) only while it still holds ARGV[1]
-- (and, with a round ARGV[2], a session lock's release at its connection's close, only while
-- the note names that round: a lock its holder re-attached elsewhere is not this release's).
-- The release at a close also leaves the lock alone while an extend from another connection
-- pinned its promise (KEYS[3] holds ARGV[1]: extend.lua): the lock then lives out the TTL
-- that extend answered 1 for, as a timed lock (its note's round loses the session's mark).
-- Any release that deletes the lock deletes the pin with it.
-- A release marked ARGV[3] (its id) where the note outlives the lock (a lock-delay) keeps
-- the note, as "!<id>" with its TTL, instead of deleting it: this node cannot tell whether
-- the release will delete the lock on a quorum. If it does not (the lock lives on where an
-- unanswered extend kept it, and expired elsewhere), the lock expired unreleased, and its
-- delay must hold on every node that held it. Once a quorum deleted it, the release
-- removes its marks (unmark.lua) before it answers. The lead is read as notelead.lua reads
-- it (exact where the server has PEXPIRETIME; less than 5 ms is none: a lock-delay is 0 or
-- at least 10 ms, and the key and its note are set by separate calls).
-- With the lock's fair queue (KEYS[4], and the waiters' leases KEYS[5]), the holder
-- ARGV[1] also leaves the queue, where it waited under its own name.
-- Returns 1 when deleted (2 when waiters are queued, to be woken), each plus 2 when the note
-- was kept marked; 0 when the key is absent or holds another value.
local function ours()
  if ARGV[2] == nil or ARGV[2] == "" then
    return true
  end
  local note = redis.call("GET", KEYS[2])
  local mine = note ~= false and string.sub(note, 1, #ARGV[2] + 1) == ARGV[2] .. " "
  if redis.call("GET", KEYS[3]) == ARGV[1] then
    -- An extend from elsewhere promised the lock a window: left to its TTL. No session
    -- renews it from now on, so its note loses the session's mark: reads show its TTL,
    -- and a later extend sets that TTL as it would a timed lock's.
    local mark = string.sub(ARGV[2], -1)
    local ttl = redis.call("PTTL", KEYS[2])
    if mine and (mark == "~" or mark == "@") and ttl > 0 then
      redis.call("SET", KEYS[2], string.sub(ARGV[2], 1, -2) .. string.sub(note, #ARGV[2] + 1), "KEEPTTL")
    end
    return false
  end
  return mine
end
if redis.call("GET", KEYS[1]) == ARGV[1] and ours() then
  local marked = 0
  if ARGV[3] and ARGV[3] ~= "" and noteLead(KEYS[1], KEYS[2]) > 0 then -- notelead.lua
    redis.call("SET", KEYS[2], "!" .. ARGV[3], "KEEPTTL")
    redis.call("DEL", KEYS[3])
    marked = 2
  else
    redis.call("DEL", KEYS[2], KEYS[3])
  end
  redis.call("DEL", KEYS[1])
  if #KEYS > 3 then
    redis.call("ZREM", KEYS[4], ARGV[1])
    redis.call("ZREM", KEYS[5], ARGV[1])
    if redis.call("ZCARD", KEYS[4]) > 0 then
      return 2 + marked
    end
  end
  return 1 + marked
end
return 0
