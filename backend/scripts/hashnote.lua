-- Prelude of the hash lock scripts, after noteafter.lua (scripts.go puts both before them).
-- A hash lock (Redisson's layout) taken with a lock-delay has a note beside it, "#<delay ms>",
-- that expires exactly that long after the hash (noteAfter): while the note outlives its hash,
-- the lock expired unreleased, and the free key is not taken (hashacquire.lua, acquire.lua).
-- A release that deletes the hash keeps the note marked "!<release id>#<delay ms>" until the
-- release knows a quorum deleted it (unmark.lua), as delifeq.lua keeps a string lock's.
-- hashDelay(note) is the delay a note or a mark names; nil for any other note, or none.
-- followHash(key, meta, ms): key's TTL was just set to ms, and its note follows it; a mark
-- (a release took the hash from this node while the owner kept the lock elsewhere, and
-- hashsetholds.lua gives it back) becomes the note again.
local function hashDelay(note)
  if not note then
    return nil
  end
  return tonumber(string.match(note, "^#(%d+)$") or string.match(note, "^!%S*#(%d+)$"))
end
local function followHash(key, meta, ms)
  local d = hashDelay(redis.call("GET", meta))
  if d then
    noteAfter(key, meta, "#" .. d, ms, d) -- noteafter.lua
  end
end
