-- Prelude of the hash lock scripts, after hashnote.lua: read-write locks (Redisson's
-- RReadWriteLock). Such a hash has a field "mode", "read" or "write", beside its holders' hold
-- counts; a writer's name is its thread's reader name with ":write" after it. Readers share the
-- lock; a writer holds it alone, but for its own thread's reads. Each holder's window ends at its
-- own time, kept in the holders set hs (RW.hs, quorum.HoldersKey of KEYS[1]: holder -> the end,
-- in this server's Unix ms); the hash lives as long as the last holder, and the note (a
-- lock-delay: hashnote.lua) follows it. rwLoad names the set from rwHoldersPrefix (scripts.go
-- writes it before this prelude) rather than a call naming it among its keys: a plain lock's
-- call never touches it, and each key or argument of a call costs the server about as much as
-- a command the script runs (the backends are independent servers, not a cluster).
-- Lua makes a closure of each function each time a script runs (no state outlives a call), and
-- a plain hash lock's path uses none of these but rwMode and rwFree: the others are made (one
-- table, RW) by rwLoad, which rwMode calls where it finds a read-write lock (and a script calls
-- before it makes one).
-- rwMode(key, owner) is the hash's mode, nil for a plain reentrant lock, another type or no key,
-- and owner's hold count on it (nil: none), read in one call; and for a key of another type the
-- error (WRONGTYPE), which a plain lock's call answers, as the HEXISTS it replaces did, and a
-- read-write lock's does not (the name is taken: hashacquire.lua, hashrelease.lua).
-- RW.settle(key, meta, hs) drops the holders whose windows ended (their holds expired, as a key
-- does) or that have no end, makes a lock whose writer is gone "read", and sets the hash's TTL
-- to the last holder's end, the note following; returns how many holders are left (0: the hash
-- is deleted, and the note is left as it is, expired unreleased). A holder that gives up its
-- last hold keeps its end in the set until then (so that a repair of a release that still holds
-- gives the hold back with its own window: hashsetholds.lua); the set lives as long as its
-- latest end.
-- A holder whose window ended unreleased while others hold the lock leaves its lock-delay in
-- the set (member "mode", never an owner: its end): until then no new holder enters
-- (hashacquire.lua, RW.pending), and rwFree(meta, hs, mark), when the last holder gives the lock
-- up (hs: the holders of a read-write lock; nil for a plain one), keeps the note until then;
-- else it marks the note with release id mark, or deletes it, as a plain hash lock's release
-- does (hashrelease.lua), answering 1 where it marked it.
-- RW.setEnd(hs, owner, ms, exact) sets owner's end ms from now: never earlier than it was, unless
-- exact (the owner's own renewal or unlock sets it as asked). RW.holds(key, owner) is whether
-- owner holds it. RW.writer(name) is whether name is a writer's. RW.now() is the server's time.
local RW -- the read-write lock functions (rwLib), where rwLoad made them
local function rwLib(hashDelay, followHash, hs)
  local M = {hs = hs}
  M.now = function()
    local t = redis.call("TIME")
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  M.writer = function(name)
    return string.sub(name, -6) == ":write"
  end
  M.holds = function(key, owner)
    return owner ~= "mode" and redis.call("HEXISTS", key, owner) == 1
  end
  M.settle = function(key, meta, hs)
    local now = M.now()
    local left, writer, last, pend = 0, false, 0, tonumber(redis.call("ZSCORE", hs, "mode") or "0")
    local d = hashDelay(redis.call("GET", meta)) or 0
    for _, f in ipairs(redis.call("HKEYS", key)) do
      if f ~= "mode" then
        local e = tonumber(redis.call("ZSCORE", hs, f) or "0")
        if e > now then
          left, last = left + 1, math.max(last, e)
          writer = writer or M.writer(f)
        else
          redis.call("HDEL", key, f)
          if e > 0 and d > 0 then
            pend = math.max(pend, e + d) -- its window ended unreleased: its lock-delay runs
          end
        end
      end
    end
    redis.call("ZREMRANGEBYSCORE", hs, "-inf", now)
    if pend > now then
      redis.call("ZADD", hs, pend, "mode")
    end
    if left == 0 then
      redis.call("DEL", key)
    else
      if not writer and redis.call("HGET", key, "mode") == "write" then
        redis.call("HSET", key, "mode", "read")
      end
      redis.call("PEXPIREAT", key, last)
      followHash(key, meta, last - now) -- hashnote.lua
    end
    local top = redis.call("ZRANGE", hs, -1, -1, "WITHSCORES")[2]
    if top then
      redis.call("PEXPIREAT", hs, tonumber(top))
    end
    return left
  end
  M.pending = function(hs)
    local p = redis.call("ZSCORE", hs, "mode")
    if p and tonumber(p) > M.now() then
      return tonumber(p)
    end
    return nil
  end
  M.setEnd = function(hs, owner, ms, exact)
    local e = M.now() + ms
    if exact or e > tonumber(redis.call("ZSCORE", hs, owner) or "0") then
      redis.call("ZADD", hs, e, owner)
    end
  end
  return M
end
local function rwLoad()
  RW = RW or rwLib(hashDelay, followHash, rwHoldersPrefix .. KEYS[1])
end
local function rwMode(key, owner)
  local r = redis.pcall("HMGET", key, "mode", owner or "mode")
  if r.err then
    return nil, nil, r -- another type: no read-write lock
  end
  if r[1] then
    rwLoad()
  end
  return r[1] or nil, tonumber(r[2])
end
local function rwFree(meta, hs, mark)
  local d = hashDelay(redis.call("GET", meta))
  local p = d and hs and RW.pending(hs)
  if d and p then
    redis.call("SET", meta, "#" .. d, "PXAT", p)
    return 0
  elseif d and mark and mark ~= "" then
    redis.call("SET", meta, "!" .. mark .. "#" .. d, "KEEPTTL")
    return 1
  elseif d then
    redis.call("DEL", meta)
  end
  return 0
end
