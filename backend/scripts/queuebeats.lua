-- Renew many waiters' leases at once (queue.lua's "beat" for each): for
-- waiter i, KEYS[2i-1] its lock's queue (a sorted set by ticket), KEYS[2i]
-- the queue's leases, ARGV[2i-1] the waiter, ARGV[2i] the lease in ms.
-- Returns per waiter 1 (lease renewed) or 0 (it is no longer queued).
local now = nowMS() -- lapsed.lua
local out = {}
for i = 1, #KEYS / 2 do
  local q, leases = KEYS[2 * i - 1], KEYS[2 * i]
  local waiter, ms = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  if redis.call("ZSCORE", q, waiter) then
    redis.call("ZADD", leases, now + ms, waiter)
    -- never shorten: another waiter's lease may end later than this one
    for _, k in ipairs({q, leases}) do
      if redis.call("PTTL", k) < ms then
        redis.call("PEXPIRE", k, ms)
      end
    end
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
