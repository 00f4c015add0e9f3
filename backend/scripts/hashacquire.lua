-- Reentrant hash lock (Redisson's layout: KEYS[1] is a hash of owner -> hold count).
-- Takes or re-enters the lock for owner ARGV[1] and sets its TTL to ARGV[2] ms.
-- KEYS[2] is the lock's note: with a lock-delay ARGV[4] (ms, 0: none) a grant notes it
-- beside the hash ("#<delay>", hashnote.lua), and a re-entry's note follows the new TTL.
-- While a note exists without its lock (this hash lock's, or a string lock's: acquire.lua),
-- that lock expired unreleased (or a release did not succeed yet) and its lock-delay runs,
-- so a free key is not taken, as acquire.lua refuses it.
-- ARGV[5] "read" or "write" takes a read-write lock (rwlock.lua; KEYS[3] its holders): a read
-- where it is free, read, or written by the reader's own thread (its writer ARGV[1]..":write"
-- holds it); a write where it is free or the writer's own. Each hold sets the holder's end to
-- ARGV[2] ms from now, a re-entry's never earlier. A plain hash lock's owner re-enters a read-write lock
-- it holds, and nothing else: a read or write of a plain hash lock is refused as taken. While
-- the lock-delay of a holder whose window ended unreleased runs (rwPending), no new holder enters.
-- With KEYS[4] (a fencing token counter), a grant also increments it, lists it in
-- the set of counters KEYS[5] so that a repair can find it, and notes its round
-- ARGV[3] as the counter's last writer in KEYS[6].
-- The last key is the lock's queue of waiters (LOCK.ACQUIRE ... WAIT): while it exists a
-- free lock is not taken (the owner re-enters a lock it holds): it is a waiter's turn.
-- Returns {1, holds, token or 0} when held now, {0, pttl, 0} when another owner holds it
-- (or waiters queue: the queue's PTTL; or a lock-delay runs: the note's PTTL).
if ARGV[1] == "mode" or ARGV[5] == "write" and not rwWriter(ARGV[1]) then
  return {0, redis.call("PTTL", KEYS[1]), 0} -- a read-write lock's field, never an owner; a writer is "<thread>:write"
end
local mode, free = ARGV[5] or "", redis.call("EXISTS", KEYS[1]) == 0
local rw = not free and rwMode(KEYS[1])
if rw and rwSettle(KEYS[1], KEYS[2], KEYS[3]) > 0 then
  rw = rwMode(KEYS[1]) -- "read" where the writer is gone
elseif rw then
  rw, free = nil, true -- every holder's window ended
end
if free and redis.call("EXISTS", KEYS[#KEYS]) == 1 then
  return {0, redis.call("PTTL", KEYS[#KEYS]), 0}
end
if free and redis.call("EXISTS", KEYS[2]) == 1 then
  return {0, redis.call("PTTL", KEYS[2]), 0}
end
local ok
if rw or mode ~= "" and not free then
  ok = rw and (mode == "read" and (rw == "read" or rwHolds(KEYS[1], ARGV[1] .. ":write"))
    or mode == "write" and rw == "write" and rwHolds(KEYS[1], ARGV[1])
    or mode == "" and rwHolds(KEYS[1], ARGV[1]))
else
  ok = free or redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1
end
if not ok then
  return {0, redis.call("PTTL", KEYS[1]), 0}
end
local pend = rw and not free and not rwHolds(KEYS[1], ARGV[1]) and rwPending(KEYS[3])
if pend then
  return {0, pend - rwNow(), 0} -- a holder's window ended unreleased: its lock-delay runs
end
local ms, delay = tonumber(ARGV[2]), tonumber(ARGV[4]) or 0
if free and mode ~= "" then
  redis.call("HSET", KEYS[1], "mode", mode)
  rw = mode
end
local n = redis.call("HINCRBY", KEYS[1], ARGV[1], 1)
if rw then
  rwEnd(KEYS[3], ARGV[1], ms, n == 1) -- a re-entry never ends the holder's window early
  rwSettle(KEYS[1], KEYS[2], KEYS[3])
  if delay > 0 then
    noteAfter(KEYS[1], KEYS[2], "#" .. delay, ms, delay) -- notelead.lua
  end
else
  redis.call("PEXPIRE", KEYS[1], ms)
  if delay > 0 then
    noteAfter(KEYS[1], KEYS[2], "#" .. delay, ms, delay) -- notelead.lua
  else
    followHash(KEYS[1], KEYS[2], ms) -- hashnote.lua
  end
end
local token = 0
if #KEYS > 4 then
  token = redis.call("INCR", KEYS[4])
  redis.call("SADD", KEYS[5], KEYS[4])
  redis.call("SET", KEYS[6], ARGV[3])
end
return {1, n, token}
