package quorum

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Fair hash locks (Redisson's RFairLock): a reentrant hash lock whose
// waiters take it in the order they came, across clients and replicas. The
// waiters are kept as LOCK.ACQUIRE ... WAIT's are (queue.go: tickets
// ordered alike on every node, a lease on each place), in a queue of the
// client's own naming (Redisson's "redisson_lock_queue:{name}"), and a
// fair acquire (an OpHashAcquire with Fair) takes a free lock on a node
// only where its owner is at the head of that queue or the queue is
// empty. Mutual exclusion is the hash lock's own (a quorum of holds); the
// queue only decides whose turn it is, so a queue that differs between
// nodes (a node that missed an add, or purged a lapsed place) can delay a
// grant but never make two.
//
// A waiter's place is leased: each refused try renews it for the wait it
// is told plus the client's thread wait time (Redisson's threadWaitTime,
// 5 minutes unless configured; tryLock's wait), so a waiter that stops
// trying (its client died) holds up the others at most that long, as on
// one Redis.

// AcquireFair takes or re-enters fair hash lock key for owner with ttl
// (padded), with AcquireHash's rules, in owner's turn in the fair queue
// named queue; lease is how long past each wait a refused owner keeps its
// place. A refused owner with join that so many nodes say is not queued
// that it cannot be on a quorum joins the queue at its tail (any place it
// kept on some node dropped first, so that no node orders it ahead of
// those queued meanwhile) and tries once more: it may be first already. A
// waiter whose nodes merely did not answer keeps its place. The failure is then a *HashTaken whose
// Wait says when to try again at the latest.
func (e *Engine) AcquireFair(ctx context.Context, key, owner, queue string, ttl, lease time.Duration, join bool) (Grant, error) {
	op := Op{Kind: OpHashAcquire, Fair: true, Key: key, Value: owner, Aux: queue, N: max(lease.Milliseconds(), 1)}
	g, err := e.acquireHashOp(ctx, op, ttl)
	var taken *HashTaken
	if !join || !errors.As(err, &taken) || taken.Queued {
		return g, err
	}
	e.Dequeue(queue, owner)
	if err := e.Enqueue(ctx, queue, owner, taken.Wait+lease); err != nil {
		return Grant{}, err
	}
	return e.acquireHashOp(ctx, op, ttl)
}

// requeue puts a fair acquire's owner back in its place, after its round
// failed, on the nodes where the round granted it (each left the queue and
// answered the ticket it had) and on those that refused it but no longer
// have it queued (a restart, a lapsed place): with the ticket most nodes
// answered, and the longest lease a refusal gives (twice the thread wait
// time). A round that failed for the nodes that did not grant (still held
// there, or another's turn) must not cost the owner its turn where it was
// first; and a node that lost its place would otherwise make a later
// waiter first there, splitting every round between the two, for good
// once one more node fails (helper-93).
func (e *Engine) requeue(t *round, op Op) {
	count := map[int64]int{}
	var where []int
	for j, v := range t.votes {
		rep := t.replies[j]
		if rep.Token > 0 {
			count[rep.Token]++
		}
		if v == yes || v == no && !rep.Own {
			where = append(where, j)
		}
	}
	var ticket int64
	for tk, n := range count { // the most answered, the larger of a tie
		if n > count[ticket] || n == count[ticket] && tk > ticket {
			ticket = tk
		}
	}
	if ticket == 0 || len(where) == 0 {
		return
	}
	e.start(where, Op{Kind: OpEnqueue, Key: op.Aux, Value: op.Value, N: ticket, TTL: 2 * time.Duration(op.N) * time.Millisecond},
		e.opts.NodeTimeout, false).drain()
}

// queuedWhereRefused counts the nodes that refused a fair acquire and said
// its owner is queued there (queued), and those that said it is not
// (unqueued).
func (t *round) queuedWhereRefused() (queued, unqueued int) {
	for j, v := range t.votes {
		switch {
		case v != no:
		case t.replies[j].Own:
			queued++
		default:
			unqueued++
		}
	}
	return queued, unqueued
}

// QueueHeads reads fair queue queue's head on every node (the first waiter
// whose place has not lapsed) and returns the distinct ones: whom a
// release wakes. Nodes that miss the node timeout are left out.
func (e *Engine) QueueHeads(queue string) []string {
	if reservedKey(queue) != nil {
		return nil
	}
	t := e.start(nil, Op{Kind: OpQueueHead, Key: queue}, e.opts.NodeTimeout, false)
	t.drain()
	var heads []string
	for j, v := range t.votes {
		if w := t.replies[j].Entry; v == yes && w.Found && !slices.Contains(heads, w.Value) {
			heads = append(heads, w.Value)
		}
	}
	return heads
}
