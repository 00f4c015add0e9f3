package wake

// Match reports whether channel matches the Redis glob pattern (*, ?,
// [abc], [^a-z], \ escapes). It backtracks only to the last star, so its
// work is at most len(pattern) * len(channel) steps, never exponential:
// a pattern like *a*b*c*...*z cannot turn a long channel name into a CPU
// bomb. Callers bound both lengths.
func Match(pattern, channel string) bool {
	p, c := 0, 0
	starP, starC := -1, 0
	for c < len(channel) {
		if p < len(pattern) {
			switch pattern[p] {
			case '*':
				starP, starC = p, c
				p++
				continue
			case '?':
				p++
				c++
				continue
			case '[':
				if ok, next := matchClass(pattern, p, channel[c]); next > 0 && ok {
					p, c = next, c+1
					continue
				}
			case '\\':
				if p+1 < len(pattern) && pattern[p+1] == channel[c] {
					p, c = p+2, c+1
					continue
				}
			default:
				if pattern[p] == channel[c] {
					p++
					c++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starC++
		p, c = starP+1, starC
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchClass matches ch against the class starting at pattern[p] == '[';
// next is the index after the class, or 0 when the class is not closed (it
// then matches nothing).
func matchClass(pattern string, p int, ch byte) (ok bool, next int) {
	i := p + 1
	negate := i < len(pattern) && pattern[i] == '^'
	if negate {
		i++
	}
	for first := true; i < len(pattern); first = false {
		if pattern[i] == ']' && !first {
			return ok != negate, i + 1
		}
		lo := pattern[i]
		if lo == '\\' && i+1 < len(pattern) {
			i++
			lo = pattern[i]
		}
		hi := lo
		if i+2 < len(pattern) && pattern[i+1] == '-' && pattern[i+2] != ']' {
			hi = pattern[i+2]
			i += 2
			if lo > hi {
				lo, hi = hi, lo
			}
		}
		if lo <= ch && ch <= hi {
			ok = true
		}
		i++
	}
	return false, 0
}
