-- A semaphore's permits as slots (quorum/semaphore.go): KEYS[1] a hash, field "p" the number of
-- permits, "g" the round of the trySetPermits that set it (its generation), "s<slot>" the id
-- holding slot <slot> (0 .. p-1), "i<id>" the slot id holds, "r<id>" the round that gave it ("": a
-- lease update answered for it since: no rollback frees it), "v<id>" the version of its last lease
-- update; KEYS[2] each held id's expiry (a sorted set, in this server's
-- ms: lapsed.lua); KEYS[3] the semaphore's tombstone while a DEL of it is recent (del.lua): the
-- generations the DEL read, space separated, which no repair brings back.
-- A permit is one slot, so however the nodes' answers fall, two holders of one slot never both
-- have a quorum. ARGV[1] says what to do:
--   take id ms start round: hold a free slot for id for ms, given by round (the first free from
--                     slot start on, when fewer than p are held, and id holds none: a second round
--                     of one id, a retry through another replica, is refused where the first
--                     wrote, as SET NX is); {1, slot, p}, or {0, ms until the first lapses
--                     (-1: none held), p};
--   undo id round:    free id's slot if round gave it (a rollback); {1 or 0, 0, p};
--   drop id:          free id's slot (a release); {1 or 0, permits not held, p};
--   ver id:           {1 when id holds a slot, else 0, the version of its last lease update, p};
--   lease id ms v:    id's permit lasts ms from now, as update version v (one past the highest a
--                     quorum read: ExtendPermit), only where v is past the last update's (a late
--                     copy of an earlier update never undoes a later one); {1, its slot, p}, or
--                     {0, 0, p} (not held), {0, -1, p} (a later update landed first);
--   init n g:         p is n, of generation g, unless set; {1 or 0, p, p};
--   repair n g:       init, but not of a generation a recent DEL of the semaphore read;
--   state:            {1 when p is set, else 0, p, g, id, slot, ms left, id, slot, ms left, ...}.
-- Each reply but state's ends with the node's generation g ("": none): {..., p, g}.
local now = nowMS() -- lapsed.lua
local function forget(id, slot)
  redis.call("HDEL", KEYS[1], "i" .. id, "s" .. slot, "r" .. id, "v" .. id, "t" .. id) -- t: an older version's stamp
  redis.call("ZREM", KEYS[2], id)
end
for _, id in ipairs(redis.call("ZRANGEBYSCORE", KEYS[2], "-inf", now, "LIMIT", 0, 256)) do
  forget(id, redis.call("HGET", KEYS[1], "i" .. id) or "")
end
-- slotOf is id's slot while its permit lasts (one that lapsed, beyond the 256 just removed,
-- is removed now).
local function slotOf(id)
  local slot = redis.call("HGET", KEYS[1], "i" .. id)
  if slot and (tonumber(redis.call("ZSCORE", KEYS[2], id)) or 0) <= now then
    forget(id, slot)
    return nil
  end
  return slot
end
local p = tonumber(redis.call("HGET", KEYS[1], "p") or "0")
local g = redis.call("HGET", KEYS[1], "g") or ""
local mode, id = ARGV[1], ARGV[2]
local function held() -- the permits held (a lapsed one left for a later call counts: never fewer)
  return redis.call("ZCARD", KEYS[2])
end
if mode == "take" then
  if slotOf(id) or held() >= p then
    local first = redis.call("ZRANGE", KEYS[2], 0, 0, "WITHSCORES")
    return {0, first[2] and math.max(tonumber(first[2]) - now, 1) or -1, p, g}
  end
  -- fewer than p held: a slot below p is free
  local start = tonumber(ARGV[4]) % p
  for j = 0, p - 1 do
    local slot = (start + j) % p
    if redis.call("HEXISTS", KEYS[1], "s" .. slot) == 0 then
      redis.call("HSET", KEYS[1], "s" .. slot, id, "i" .. id, slot, "r" .. id, ARGV[5])
      redis.call("ZADD", KEYS[2], now + tonumber(ARGV[3]), id)
      return {1, slot, p, g}
    end
  end
  return redis.error_reply("ERR semaphore slots out of step with its holders")
elseif mode == "undo" or mode == "drop" then
  local slot = slotOf(id)
  if not slot or mode == "undo" and redis.call("HGET", KEYS[1], "r" .. id) ~= ARGV[3] then
    return {0, p - held(), p, g}
  end
  forget(id, slot)
  return {1, p - held(), p, g}
elseif mode == "lease" then
  local slot = slotOf(id)
  if not slot then
    return {0, 0, p, g}
  end
  local v = tonumber(ARGV[4])
  if v <= tonumber(redis.call("HGET", KEYS[1], "v" .. id) or "0") then
    return {0, -1, p, g}
  end
  redis.call("ZADD", KEYS[2], now + tonumber(ARGV[3]), id)
  redis.call("HSET", KEYS[1], "v" .. id, v, "r" .. id, "")
  return {1, tonumber(slot), p, g}
elseif mode == "ver" then
  return {slotOf(id) and 1 or 0, tonumber(redis.call("HGET", KEYS[1], "v" .. id) or "0"), p, g}
elseif mode == "repair" or mode == "init" then
  -- a tombstone lists the generations its DEL read; one without a generation (set by an
  -- earlier version) is kept from any repair without one
  local gone = redis.call("GET", KEYS[3])
  gone = gone and (ARGV[3] == "" or (" " .. gone .. " "):find(" " .. ARGV[3] .. " ", 1, true))
  if mode == "repair" and gone or redis.call("HSETNX", KEYS[1], "p", ARGV[2]) == 0 then
    return {0, p, p, g}
  end
  redis.call("HSET", KEYS[1], "g", ARGV[3])
  return {1, tonumber(ARGV[2]), tonumber(ARGV[2]), ARGV[3]}
end
local out = {redis.call("HEXISTS", KEYS[1], "p"), p, g}
local all = redis.call("ZRANGE", KEYS[2], 0, -1, "WITHSCORES")
for i = 1, #all, 2 do
  out[#out + 1] = all[i]
  out[#out + 1] = tonumber(redis.call("HGET", KEYS[1], "i" .. all[i]) or "-1")
  out[#out + 1] = math.max(tonumber(all[i + 1]) - now, 0)
end
return out
