-- Reentrant hash lock (Redisson's layout: KEYS[1] is a hash of owner -> hold count).
-- Takes or re-enters the lock for owner ARGV[1] and sets its TTL to ARGV[2] ms.
-- KEYS[2] is the lock's note: with a lock-delay ARGV[4] (ms, 0: none) a grant notes it
-- beside the hash ("#<delay>", hashnote.lua), and a re-entry's note follows the new TTL.
-- While a note exists without its lock (this hash lock's, or a string lock's: acquire.lua),
-- that lock expired unreleased (or a release did not succeed yet) and its lock-delay runs,
-- so a free key is not taken, as acquire.lua refuses it.
-- ARGV[5] "read" or "write" takes a read-write lock (rwlock.lua): a read
-- where it is free, read, or written by the reader's own thread (its writer ARGV[1]..":write"
-- holds it); a write where it is free or the writer's own. Each hold sets the holder's end to
-- ARGV[2] ms from now, a re-entry's never earlier. A plain hash lock's owner re-enters a read-write lock
-- it holds, and nothing else: a read or write of a plain hash lock is refused as taken. While
-- the lock-delay of a holder whose window ended unreleased runs (RW.pending), no new holder enters.
-- With KEYS[3] (a fencing token counter), a grant also increments it, lists it in
-- the set of counters KEYS[4] so that a repair can find it, and notes its round
-- ARGV[3] as the counter's last writer in KEYS[5].
-- The last key is the lock's queue of waiters (LOCK.ACQUIRE ... WAIT): while it exists a
-- free lock is not taken (the owner re-enters a lock it holds): it is a waiter's turn.
-- Returns {1, holds, token or 0} when held now, {0, pttl, 0} when another owner holds it
-- (or waiters queue: the queue's PTTL; or a lock-delay runs: the note's PTTL).
local mode = ARGV[5] or ""
if mode ~= "" then
  rwLoad() -- rwlock.lua
end
if ARGV[1] == "mode" or mode == "write" and not RW.writer(ARGV[1]) then
  return {0, redis.call("PTTL", KEYS[1]), 0} -- a read-write lock's field, never an owner; a writer is "<thread>:write"
end
local free = redis.call("EXISTS", KEYS[1]) == 0
local rw, mine, bad = nil, nil, nil
if not free then
  rw, mine, bad = rwMode(KEYS[1], ARGV[1])
end
if bad and mode == "" then
  return bad -- a key of another type (a read or write finds it taken, below)
end
if rw and RW.settle(KEYS[1], KEYS[2], RW.hs) > 0 then
  rw = rwMode(KEYS[1]) -- "read" where the writer is gone
elseif rw then
  rw, free = nil, true -- every holder's window ended
end
if free and redis.call("EXISTS", KEYS[#KEYS], KEYS[2]) > 0 then -- waiters queue, or a lock-delay runs
  local q = redis.call("EXISTS", KEYS[#KEYS]) == 1 and KEYS[#KEYS] or KEYS[2]
  return {0, redis.call("PTTL", q), 0}
end
local ok
if rw or mode ~= "" and not free then
  ok = rw and (mode == "read" and (rw == "read" or RW.holds(KEYS[1], ARGV[1] .. ":write"))
    or mode == "write" and rw == "write" and RW.holds(KEYS[1], ARGV[1])
    or mode == "" and RW.holds(KEYS[1], ARGV[1]))
else
  ok = free or mine ~= nil
end
if not ok then
  return {0, redis.call("PTTL", KEYS[1]), 0}
end
local pend = rw and not free and not RW.holds(KEYS[1], ARGV[1]) and RW.pending(RW.hs)
if pend then
  return {0, pend - RW.now(), 0} -- a holder's window ended unreleased: its lock-delay runs
end
local ms, delay = tonumber(ARGV[2]), tonumber(ARGV[4]) or 0
if free and mode ~= "" then
  redis.call("HSET", KEYS[1], "mode", mode)
  rw = mode
end
local n = redis.call("HINCRBY", KEYS[1], ARGV[1], 1)
if rw then
  RW.setEnd(RW.hs, ARGV[1], ms, n == 1) -- a re-entry never ends the holder's window early
  RW.settle(KEYS[1], KEYS[2], RW.hs)
  if delay > 0 then
    noteAfter(KEYS[1], KEYS[2], "#" .. delay, ms, delay) -- noteafter.lua
  end
else
  redis.call("PEXPIRE", KEYS[1], ms)
  if delay > 0 then
    noteAfter(KEYS[1], KEYS[2], "#" .. delay, ms, delay) -- noteafter.lua
  elseif not free then
    followHash(KEYS[1], KEYS[2], ms) -- hashnote.lua (a free lock has no note: refused above)
  end
end
local token = 0
if #KEYS > 3 then
  token = redis.call("INCR", KEYS[3])
  redis.call("SADD", KEYS[4], KEYS[3])
  redis.call("SET", KEYS[5], ARGV[3])
end
return {1, n, token}
