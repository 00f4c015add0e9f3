-- Prelude of the scripts that read a fenced lock's token (scripts.go puts it before them).
-- A string lock's note is "<round> <pad>" and its token part: none (no token), " 0" (a
-- fenced acquire's before its raise noted one), " <token>" (a fenced acquire's, final),
-- " =<token>" (fixed by a first token read), or " ?<token> <until>": tentative, noted by
-- a fenced acquire's first raise, which that acquire's second raise (when it was outbid)
-- may still replace until this node's clock reaches <until> (ms); from then on the
-- tentative token is this node's for good, as a final one is (raise.lua refuses the change).
-- settledPart(rest) is the token part rest as it stands for good: a final or fixed one
-- as it is, a settled tentative one " <token>"; an unsettled one " 0" (no token yet), with
-- the ms until it settles as the second result (0 for all others).
local function settledPart(rest)
  local token, untl = string.match(rest, "^ %?(%d+) (%d+)$")
  if not token then
    return rest, 0
  end
  local t = redis.call("TIME")
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if now >= tonumber(untl) then
    return " " .. token, 0
  end
  return " 0", tonumber(untl) - now
end
