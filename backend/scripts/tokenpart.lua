-- Prelude of the scripts that read a fenced lock's token (scripts.go puts it before them).
-- A string lock's note is "<round> <pad>" and its token part: none (no token), " 0" (a
-- fenced acquire's before its raise noted one), " ?<token>" (tentative: noted by the
-- acquire's first raise, which may yet be outbid), " <token>" (final: made so by the
-- acquire's last raise, its outbid second raise's or the confirmation of its first), or
-- " =<token>" (fixed by a first token read). Only the acquire's last raise makes a token
-- final, and it never makes another one final beside it (raise.lua): a tentative token is
-- no token to a read, unless another holder of the same round notes it final (the first
-- raise's token was then the last raise's too: it was confirmed), which the engine judges.
-- settledPart(rest) is the token part rest as a read counts it on this node alone: a
-- tentative one " 0" (no token yet), with its token as the second result (nil for all
-- others).
local function settledPart(rest)
  local token = string.match(rest, "^ %?(%d+)$")
  if not token then
    return rest, nil
  end
  return " 0", token
end
