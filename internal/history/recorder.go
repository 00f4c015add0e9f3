package history

import (
	"sync"
	"time"
)

// Recorder collects ops from many goroutines. Begin stamps the invoke time;
// the returned func stamps the return time and records the op.
type Recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []Op
}

// NewRecorder starts a history now.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// Since is the offset of t from the history's start.
func (r *Recorder) Since(t time.Time) time.Duration { return t.Sub(r.start) }

// Begin notes that op is being sent now. Call the returned func as soon as the
// answer is read, with the op's outcome filled in.
func (r *Recorder) Begin(op Op) func(outcome Outcome, token int64, err error) {
	op.Invoke = time.Since(r.start)
	return func(outcome Outcome, token int64, err error) {
		op.Return = time.Since(r.start)
		op.Outcome, op.Token = outcome, token
		if err != nil {
			op.Error = err.Error()
		}
		r.mu.Lock()
		r.ops = append(r.ops, op)
		r.mu.Unlock()
	}
}

// Add records an op whose times the caller measured itself.
func (r *Recorder) Add(op Op) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// Ops is a copy of what has been recorded so far, in completion order.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}
