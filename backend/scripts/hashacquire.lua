-- Reentrant hash lock (Redisson's layout: KEYS[1] is a hash of owner -> hold count).
-- Takes or re-enters the lock for owner ARGV[1] and sets its TTL to ARGV[2] ms.
-- KEYS[2] is the lock's note: with a lock-delay ARGV[4] (ms, 0: none) a grant notes it
-- beside the hash ("#<delay>", hashnote.lua), and a re-entry's note follows the new TTL.
-- While a note exists without its lock (this hash lock's, or a string lock's: acquire.lua),
-- that lock expired unreleased (or a release did not succeed yet) and its lock-delay runs,
-- so a free key is not taken, as acquire.lua refuses it.
-- With KEYS[3] (a fencing token counter), a grant also increments it, lists it in
-- the set of counters KEYS[4] so that a repair can find it, and notes its round
-- ARGV[3] as the counter's last writer in KEYS[5].
-- The last key is the lock's queue of waiters (LOCK.ACQUIRE ... WAIT): while it exists a
-- free lock is not taken (the owner re-enters a lock it holds): it is a waiter's turn.
-- Returns {1, holds, token or 0} when held now, {0, pttl, 0} when another owner holds it
-- (or waiters queue: the queue's PTTL; or a lock-delay runs: the note's PTTL).
local free = redis.call("EXISTS", KEYS[1]) == 0
if free and redis.call("EXISTS", KEYS[#KEYS]) == 1 then
  return {0, redis.call("PTTL", KEYS[#KEYS]), 0}
end
if free and redis.call("EXISTS", KEYS[2]) == 1 then
  return {0, redis.call("PTTL", KEYS[2]), 0}
end
if free or redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
  local n = redis.call("HINCRBY", KEYS[1], ARGV[1], 1)
  local ms, delay = tonumber(ARGV[2]), tonumber(ARGV[4]) or 0
  redis.call("PEXPIRE", KEYS[1], ms)
  if delay > 0 then
    noteAfter(KEYS[1], KEYS[2], "#" .. delay, ms, delay) -- notelead.lua
  else
    followHash(KEYS[1], KEYS[2], ms) -- hashnote.lua
  end
  local token = 0
  if #KEYS > 3 then
    token = redis.call("INCR", KEYS[3])
    redis.call("SADD", KEYS[4], KEYS[3])
    redis.call("SET", KEYS[5], ARGV[3])
  end
  return {1, n, token}
end
return {0, redis.call("PTTL", KEYS[1]), 0}
