-- Repairs a reentrant hash lock whose hold count fell behind the quorum's: sets owner
-- ARGV[1]'s holds on KEYS[1] to ARGV[2] and its TTL to ARGV[3] ms, where the owner holds it,
-- or where the key is free and has no note (never over another owner, nor inside a lock-delay,
-- as hashacquire.lua), but for the mark of release ARGV[6] (it gave up the owner's last hold
-- here while the owner kept the lock elsewhere): its note KEYS[2] follows (hashnote.lua).
-- With KEYS[3] (an unlock latch), where it set them, the latch records ARGV[5] for ARGV[4] ms,
-- the result the quorum answered (a refused repair claims nothing). Returns 1 when set, else 0.
local free = redis.call("EXISTS", KEYS[1]) == 0
if free then
  local note, mark = redis.call("GET", KEYS[2]), "!" .. (ARGV[6] or "") .. "#"
  if note and not (ARGV[6] and ARGV[6] ~= "" and string.sub(note, 1, #mark) == mark) then
    return 0
  end
end
if free or redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
  redis.call("HSET", KEYS[1], ARGV[1], ARGV[2])
  redis.call("PEXPIRE", KEYS[1], ARGV[3])
  followHash(KEYS[1], KEYS[2], tonumber(ARGV[3]))
  if #KEYS > 2 then
    redis.call("SET", KEYS[3], ARGV[5], "PX", ARGV[4])
  end
  return 1
end
return 0
