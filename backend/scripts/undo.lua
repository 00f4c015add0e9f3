-- Rollback of one acquire round: delete KEYS[1] only while it holds ARGV[1] AND its note
-- KEYS[2] says round ARGV[2] wrote it. A retry of the same value by another round (through
-- another proxy replica) wrote its own note, so its lock is never removed here.
-- Returns 1 when deleted, else 0.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  local note = redis.call("GET", KEYS[2])
  if note and string.sub(note, 1, #ARGV[2] + 1) == ARGV[2] .. " " then
    redis.call("DEL", KEYS[1], KEYS[2])
    return 1
  end
end
return 0
