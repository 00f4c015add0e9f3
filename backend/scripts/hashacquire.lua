-- Reentrant hash lock (Redisson's layout: KEYS[1] is a hash of owner -> hold count).
-- Takes or re-enters the lock for owner ARGV[1] and sets its TTL to ARGV[2] ms.
-- With KEYS[2] (a fencing token counter), a grant also increments it, lists it in
-- the set of counters KEYS[3] so that a repair can find it, and notes its round
-- ARGV[3] as the counter's last writer in KEYS[4].
-- The last key is the lock's queue of waiters (LOCK.ACQUIRE ... WAIT): while it exists a
-- free lock is not taken (the owner re-enters a lock it holds): it is a waiter's turn.
-- Returns {1, holds, token or 0} when held now, {0, pttl, 0} when another owner holds it
-- (or waiters queue: the queue's PTTL).
local free = redis.call("EXISTS", KEYS[1]) == 0
if free and redis.call("EXISTS", KEYS[#KEYS]) == 1 then
  return {0, redis.call("PTTL", KEYS[#KEYS]), 0}
end
if free or redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
  local n = redis.call("HINCRBY", KEYS[1], ARGV[1], 1)
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  local token = 0
  if #KEYS > 2 then
    token = redis.call("INCR", KEYS[2])
    redis.call("SADD", KEYS[3], KEYS[2])
    redis.call("SET", KEYS[4], ARGV[3])
  end
  return {1, n, token}
end
return {0, redis.call("PTTL", KEYS[1]), 0}
