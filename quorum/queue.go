package quorum

import (
	"context"
	"time"
)

// Fair queues, as Redisson's RFairLock keeps one on a single node, kept by
// quorum: each waiter of a lock is in the key's queue (QueueKey) on the
// nodes with a ticket, and a fair acquire (AcquireWaiting) sets the lock
// only where its waiter is at the head. Tickets order waiters the same way
// on every node (ties broken by the waiter's name), so the first waiter is
// at the head of every node that has it, a quorum at least.
//
// A ticket is one more than the largest ticket a quorum of counting nodes
// holds; the waiter is then added with it on a quorum. So a waiter whose
// Enqueue began after another's returned gets a larger ticket: any two
// quorums share a node. A waiter holds a lease on its place (QueueBeat
// renews it); one whose replica stopped renewing is purged by the next fair
// acquire that meets it, and one that gives up leaves at once (Dequeue).

// Enqueue adds waiter to key's queue with a ticket after every waiter
// already queued, leased for lease. A waiter queued already keeps its
// place. ErrNoQuorum when too few counting nodes answered.
func (e *Engine) Enqueue(ctx context.Context, key, waiter string, lease time.Duration) error {
	if err := reservedKey(key); err != nil {
		return err
	}
	return e.enqueue(ctx, key, waiter, lease)
}

// enqueue is Enqueue of queue key, unchecked (a fair lock's queue is in the
// proxy's own names: fairQueue). A ticket is also at least the time in µs:
// a waiter that queues again gets another ticket than the place it left
// (the queue may have emptied meanwhile), so that a removal of the place
// it left, by its ticket (leftQueue), never takes the new one.
func (e *Engine) enqueue(ctx context.Context, key, waiter string, lease time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := e.start(nil, Op{Kind: OpQueueTail, Key: key}, e.opts.NodeTimeout, true)
	t.collect()
	if t.nYes < e.quorum {
		t.drain()
		return t.roundError(RoundQueue, ErrNoQuorum)
	}
	var tail int64
	for i, v := range t.votes {
		if v == yes {
			tail = max(tail, t.replies[i].N)
		}
	}
	t.finish(func() {})
	ticket := max(tail+1, time.Now().UnixMicro())
	add := e.start(nil, Op{Kind: OpEnqueue, Key: key, Value: waiter, N: ticket, TTL: lease}, e.opts.NodeTimeout, true)
	add.collect()
	if add.nYes < e.quorum {
		add.drain()
		rerr := add.roundError(RoundQueue, ErrNoQuorum)
		e.dequeue(key, waiter)
		return rerr
	}
	add.finish(func() {})
	return nil
}

// QueueBeat renews waiter's lease on its place in key's queue. It reports
// false when a quorum no longer has it (its lease ran out, or it was
// purged): it must Enqueue again, at the back.
func (e *Engine) QueueBeat(ctx context.Context, key, waiter string, lease time.Duration) (bool, error) {
	if err := reservedKey(key); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	t := e.start(nil, Op{Kind: OpQueueBeat, Key: key, Value: waiter, TTL: lease}, e.opts.NodeTimeout, true)
	t.collect()
	defer t.finish(func() {})
	switch {
	case t.nYes >= e.quorum:
		return true, nil
	case t.nNo > len(e.nodes)-e.quorum:
		return false, nil
	}
	return false, t.roundError(RoundQueue, ErrNoQuorum)
}

// Dequeue takes waiter out of key's queue on every node and waits for
// them (at most a node timeout each). A node it misses purges the waiter
// when its lease ends.
func (e *Engine) Dequeue(key, waiter string) {
	if reservedKey(key) != nil {
		return
	}
	e.dequeue(key, waiter)
}

func (e *Engine) dequeue(key, waiter string) {
	e.start(nil, Op{Kind: OpDequeue, Key: key, Value: waiter}, e.opts.NodeTimeout, false).drain()
}
