-- Prelude of the scripts that compare a session lock's rounds (scripts.go puts it before
-- them). Re-attach rounds are ordered ("<generation>.<arrival µs>.<random>^<id>@",
-- Engine.Reattach; an acquire's round, or any other, is 0.0.0), by arrival, then generation,
-- then the random part. roundBefore(a, b) reports round a ordered below round b.
local function roundOrder(round)
  local g, t, x = string.match(round or "", "^(%d+)%.(%d+)%.(%d+)%^")
  return tonumber(t) or 0, tonumber(g) or 0, tonumber(x) or 0
end
local function roundBefore(a, b)
  local t1, g1, x1 = roundOrder(a)
  local t2, g2, x2 = roundOrder(b)
  return t1 < t2 or t1 == t2 and (g1 < g2 or g1 == g2 and x1 < x2)
end
