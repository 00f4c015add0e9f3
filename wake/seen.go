package wake

import "time"

// seenFor is how long a message id is remembered: far longer than the gap
// between the copies of one message from different backends.
const seenFor = time.Minute

// seenMax bounds one generation of remembered ids: a flood of messages
// shortens how long they are remembered, not the memory they take.
const seenMax = 1 << 20

// seenSet remembers delivered ids in two generations, each at most seenFor
// old: a lookup checks both, an insert goes to the current one, and the
// current one becomes the previous when it is seenFor old or full. Every
// operation is O(1); memory is bounded by seenMax per generation.
type seenSet struct {
	cur, prev map[string]struct{}
	since     time.Time // when cur was started
}

func (s *seenSet) add(key string, now time.Time) bool {
	if _, dup := s.cur[key]; dup {
		return false
	}
	if _, dup := s.prev[key]; dup {
		return false
	}
	if s.cur == nil || now.Sub(s.since) > seenFor || len(s.cur) >= seenMax {
		s.prev, s.cur, s.since = s.cur, make(map[string]struct{}), now
	}
	s.cur[key] = struct{}{}
	return true
}
