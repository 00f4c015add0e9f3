package proxy

import (
	"fmt"
	"runtime/debug"
	"time"
)

// panicLogEvery bounds panic logging: a client that can trigger a panic must
// not be able to flood the log (before AUTH, too).
const panicLogEvery = 10 * time.Second

// logPanic logs a recovered panic with a short stack, at most once per
// panicLogEvery; the ones in between are counted and the count logged with
// the next. attrs say where.
func (s *Server) logPanic(msg string, r any, attrs ...any) {
	now := time.Now().UnixNano()
	last := s.panicLogged.Load()
	if last != 0 && now-last < int64(panicLogEvery) || !s.panicLogged.CompareAndSwap(last, now) {
		s.panicsQuiet.Add(1)
		return
	}
	stack := debug.Stack()
	if len(stack) > 2048 {
		stack = stack[:2048]
	}
	attrs = append(attrs, "panic", fmt.Sprint(r), "suppressed_since_last", s.panicsQuiet.Swap(0), "stack", string(stack))
	s.opts.logger.Error(msg, attrs...)
}
