package quorum

import (
	"time"
)

// fakeWaiter is one waiter's place in a fake node's fair queue.
type fakeWaiter struct {
	ticket int64
	until  time.Time // its lease ends
}

// queueLocked is key's queue, with waiters whose lease ended purged.
func (f *fakeNode) queueLocked(key string) map[string]fakeWaiter {
	if f.queues == nil {
		f.queues = map[string]map[string]fakeWaiter{}
	}
	q := f.queues[key]
	if q == nil {
		q = map[string]fakeWaiter{}
		f.queues[key] = q
	}
	for w, p := range q {
		if !time.Now().Before(p.until) {
			delete(q, w)
		}
	}
	return q
}

// head is the first waiter of q: the smallest ticket, then name.
func head(q map[string]fakeWaiter) (string, bool) {
	first, found := "", false
	for w, p := range q {
		if f := q[first]; !found || p.ticket < f.ticket || p.ticket == f.ticket && w < first {
			first, found = w, true
		}
	}
	return first, found
}

// fairRefusal is the fair acquire's check: refused, with the wait in N, when
// another waiter is at the head of the queue or the key is held.
func (f *fakeNode) fairRefusal(op Op) (Reply, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.queueLocked(op.Key)
	if !op.Fair { // only a waiter takes a lock others wait for
		_, queued := head(q)
		return Reply{}, queued
	}
	if h, ok := head(q); ok && h != op.Value {
		return Reply{N: max(1, time.Until(q[h].until).Milliseconds())}, true
	}
	if e, ok := f.data[op.Key]; ok && time.Now().Before(e.expiry) {
		return Reply{N: max(1, time.Until(e.expiry).Milliseconds())}, true
	}
	return Reply{}, false
}

func (f *fakeNode) applyQueue(op Op) Reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.queueLocked(op.Key)
	p, queued := q[op.Value]
	switch op.Kind {
	case OpQueueTail:
		var tail int64
		for _, p := range q {
			tail = max(tail, p.ticket)
		}
		return Reply{OK: true, N: tail}
	case OpEnqueue:
		if !queued {
			p.ticket = op.N
		}
		p.until = time.Now().Add(op.TTL)
		q[op.Value] = p
		return Reply{OK: true}
	case OpQueueBeat:
		if queued {
			p.until = time.Now().Add(op.TTL)
			q[op.Value] = p
		}
		return Reply{OK: queued}
	}
	delete(q, op.Value)
	return Reply{OK: queued}
}
