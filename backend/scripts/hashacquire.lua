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
-- With KEYS[3] (a fencing token counter: quorum.LockCounterKey) of six keys, a grant also
-- increments it, lists it in the set of counters KEYS[4] so that a repair can find it, and
-- notes its round ARGV[3] as the counter's last writer in KEYS[5]. A counter this node lacks
-- (never made here, or lost) starts from the shared counter tokenKey (counterseed.lua).
-- The last key is the lock's queue of waiters (LOCK.ACQUIRE ... WAIT): while it exists a
-- free lock is not taken (the owner re-enters a lock it holds): it is a waiter's turn.
-- A fair acquire (Redisson's RFairLock: ARGV[6] a waiter's lease in ms) has instead its own
-- queue, KEYS[3] its waiters by ticket and KEYS[4] their leases (queue.lua): it first purges
-- waiters whose lease ended, takes a free lock only when the queue is empty or ARGV[1] is at
-- its head, and leaves the queue when it holds the lock (answering its ticket in place of a
-- token: a failed round puts it back where it was). A refused owner is told to wait at
-- most ARGV[6] ms, and where it is queued keeps its place ARGV[6] ms beyond that wait.
-- A grant that makes a new lock here notes its round ARGV[3] as the lock's grant stamp (print.lua)
-- for its first lease.
-- Returns {1, holds, token or 0} when held now, {0, pttl, ticket} when another owner holds it
-- (or waiters queue: the queue's PTTL, a fair acquire's the lease of the waiter ahead; or a
-- lock-delay runs: the note's PTTL); ticket is a fair acquire's owner's place, 0: not queued.
local mode = ARGV[5] or ""
local fairMS = tonumber(ARGV[6] or "")
local now = 0
if fairMS then
  now = nowMS() -- lapsed.lua
  dropLapsed(KEYS[3], KEYS[4], now)
end
-- refuse answers a refusal to wait ms. A fair owner is told to wait at most its thread wait
-- time ARGV[6] (so it tries again at least that often), and where it is queued its place is
-- kept that much longer than the wait: a waiter that stops trying holds up the others at most
-- twice its thread wait time, a live one never loses its place.
-- Nor longer than until the first place ahead of it ends: a waiter ahead that stopped trying
-- leaves then, and nobody else would tell it.
local function refuse(ms)
  local ticket = fairMS and redis.call("ZSCORE", KEYS[3], ARGV[1])
  if fairMS then
    local ahead = redis.call("ZRANGEBYSCORE", KEYS[3], "-inf", ticket and "(" .. ticket or "+inf", "LIMIT", 0, 64)
    for _, w in ipairs(ahead) do
      ms = math.min(ms, (tonumber(redis.call("ZSCORE", KEYS[4], w)) or now) - now)
    end
    ms = math.max(1, math.min(ms, fairMS))
  end
  if ticket then
    local lease = math.max(ms, 0) + fairMS
    redis.call("ZADD", KEYS[4], now + lease, ARGV[1])
    for _, k in ipairs({KEYS[3], KEYS[4]}) do
      if redis.call("PTTL", k) < lease then
        redis.call("PEXPIRE", k, lease)
      end
    end
    return {0, ms, tonumber(ticket)}
  end
  return {0, ms, 0}
end
if mode ~= "" then
  rwLoad() -- rwlock.lua
end
if ARGV[1] == "mode" or mode == "write" and not RW.writer(ARGV[1]) then
  return refuse(redis.call("PTTL", KEYS[1])) -- a read-write lock's field, never an owner; a writer is "<thread>:write"
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
if free and fairMS then
  local head = redis.call("ZRANGE", KEYS[3], 0, 0)[1]
  if head and head ~= ARGV[1] then -- the waiter ahead's turn, until its lease ends
    local ends = tonumber(redis.call("ZSCORE", KEYS[4], head)) or now
    return refuse(math.max(1, ends - now))
  elseif redis.call("EXISTS", KEYS[2]) == 1 then -- a lock-delay runs
    return refuse(redis.call("PTTL", KEYS[2]))
  end
elseif free and redis.call("EXISTS", KEYS[#KEYS], KEYS[2]) > 0 then -- waiters queue, or a lock-delay runs
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
  return refuse(redis.call("PTTL", KEYS[1]))
end
local pend = rw and not free and not RW.holds(KEYS[1], ARGV[1]) and RW.pending(RW.hs)
if pend then
  return refuse(pend - RW.now()) -- a holder's window ended unreleased: its lock-delay runs
end
local ms, delay = tonumber(ARGV[2]), tonumber(ARGV[4]) or 0
if free and mode ~= "" then
  redis.call("HSET", KEYS[1], "mode", mode)
  rw = mode
end
local n = redis.call("HINCRBY", KEYS[1], ARGV[1], 1)
if free then -- a new lock here: its grant's stamp, for its first lease (print.lua)
  redis.call("SET", stampPrefix .. KEYS[1], ARGV[3], "PX", ms)
end
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
if fairMS then -- it leaves the queue; its ticket is answered, for a rollback to put it back
  local ticket = redis.call("ZSCORE", KEYS[3], ARGV[1])
  redis.call("ZREM", KEYS[3], ARGV[1])
  redis.call("ZREM", KEYS[4], ARGV[1])
  return {1, n, tonumber(ticket or "0")}
end
local token = 0
if #KEYS == 6 then
  if redis.call("EXISTS", KEYS[3]) == 0 then
    redis.call("SET", KEYS[3], counterSeed())
  end
  token = redis.call("INCR", KEYS[3])
  redis.call("SADD", KEYS[4], KEYS[3])
  redis.call("SET", KEYS[5], ARGV[3])
end
return {1, n, token}
