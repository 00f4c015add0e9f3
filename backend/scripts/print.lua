-- Prelude of the scripts that act on a lock whoever holds it (del.lua, setxx.lua,
-- hashlease.lua), after the hash prelude: lockPrint() is a digest of what lock KEYS[1] is now,
-- KEYS[2] its note and KEYS[3] its pin, a read-write lock's holders (rwlock.lua), a semaphore of
-- that name and a hash lock's grant stamp (printPrefixes, which scripts.go writes before this
-- prelude: the holders', quorum.SemaphoreKey's, SemaphoreLeaseKey's and GrantStampKey's: a hash
-- lock's round is there, as a string lock's is in its note); "" when none of them exists. A
-- read-write lock is settled first (its lapsed holders leave), as every script touching it
-- does. It is the SHA1 of each key's type, content (a hash's fields sorted) and expiry time
-- (PEXPIRETIME, Redis 7; before it, content only: README), so a lock taken again since (its
-- round, content or expiry differ) prints differently: such a script, sent after a quorum's
-- prints were read (quorum/forcerelease.go), acts only where the lock still prints as one of
-- them (printIn), and a late copy of it never reaches a later holder's lock.
local function keyPrint(k)
  local t = redis.call("TYPE", k)["ok"]
  if t == "none" then
    return "-"
  end
  local body
  if t == "string" then
    body = {redis.call("GET", k)}
  elseif t == "hash" then
    local all = redis.call("HGETALL", k)
    body = {}
    for i = 1, #all, 2 do
      body[#body + 1] = #all[i] .. ":" .. all[i] .. all[i + 1]
    end
    table.sort(body)
  elseif t == "zset" then
    body = redis.call("ZRANGE", k, 0, -1, "WITHSCORES")
  else
    body = {redis.call("DUMP", k)}
  end
  for i = 1, #body do
    body[i] = #body[i] .. ":" .. body[i]
  end
  local at = redis.pcall("PEXPIRETIME", k)
  if type(at) ~= "number" then
    at = ""
  end
  return t .. " " .. at .. " " .. table.concat(body)
end
local function lockPrint()
  if rwMode(KEYS[1]) then
    RW.settle(KEYS[1], KEYS[2], RW.hs)
  end
  local parts, any = {KEYS[1], KEYS[2], KEYS[3]}, false
  for _, prefix in ipairs(printPrefixes) do
    parts[#parts + 1] = prefix .. KEYS[1]
  end
  for i, k in ipairs(parts) do
    parts[i] = keyPrint(k)
    any = any or parts[i] ~= "-"
  end
  return any and redis.sha1hex(table.concat(parts, "\n")) or ""
end
-- printIn(one, prints) is whether print one is one of prints (space separated).
local function printIn(one, prints)
  for p in string.gmatch(prints, "%S+") do
    if p == one then
      return true
    end
  end
  return false
end
