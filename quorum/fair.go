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
// place. A refused owner with join for which no quorum answered one
// ticket (requeue) joins the queue at its tail (any place it kept on some
// node dropped first, so that no node orders it ahead of those queued
// meanwhile) and tries once more: it may be first already. The failure is
// then a *HashTaken whose Wait says when to try again at the latest.
func (e *Engine) AcquireFair(ctx context.Context, key, owner, queue string, ttl, lease time.Duration, join bool) (Grant, error) {
	if err := reservedKey(key, queue); err != nil {
		return Grant{}, err
	}
	q := fairQueue(queue)
	op := Op{Kind: OpHashAcquire, Fair: true, Key: key, Value: owner, Aux: q, N: max(lease.Milliseconds(), 1)}
	g, err := e.acquireHashOp(ctx, op, ttl)
	var taken *HashTaken
	if !join || !errors.As(err, &taken) || taken.Queued {
		return g, err
	}
	e.dequeue(q, owner)
	if err := e.enqueue(ctx, q, owner, taken.Wait+lease); err != nil {
		return Grant{}, err
	}
	return e.acquireHashOp(ctx, op, ttl)
}

// fairQueue is the name a fair lock's queue of the client's naming is kept
// under: one no client key has, so that it is never the wait queue of a
// key of that name (LOCK.ACQUIRE ... WAIT of "redisson_lock_queue:{x}"
// would otherwise queue in lock x's; helper-95). FairQueueKey is its key.
func fairQueue(queue string) string { return InternalPrefix + "fair:" + queue }

// FairQueueKey and FairQueueLeaseKey are the keys of fair queue queue's
// tickets and leases on a node.
func FairQueueKey(queue string) string      { return QueueKey(fairQueue(queue)) }
func FairQueueLeaseKey(queue string) string { return QueueLeaseKey(fairQueue(queue)) }

// LeaveFair takes waiter out of fair queue queue on every node, as Dequeue
// does (Redisson's acquireFailed: a waiter gives up).
func (e *Engine) LeaveFair(queue, waiter string) {
	if reservedKey(queue) == nil {
		e.dequeue(fairQueue(queue), waiter)
	}
}

// placeOf is the ticket most nodes of round t answered for its fair
// acquire's owner (a refusal's where it is queued, a grant's the one it
// left the queue with), the larger of a tie, and how many answered it;
// 0 when none did.
func placeOf(t *round) (ticket int64, n int) {
	count := map[int64]int{}
	for j, v := range t.votes {
		if rep := t.replies[j]; (v == yes || v == no) && rep.Token > 0 {
			count[rep.Token]++
		}
	}
	for tk, c := range count {
		if c > n || c == n && tk > ticket {
			ticket, n = tk, c
		}
	}
	return ticket, n
}

// requeue keeps a fair acquire's owner in its place after its round
// failed, and reports whether it has one: a quorum answered the same
// ticket for it. The nodes that answered otherwise (those where the round
// granted it and it left the queue, those that lost its place in a
// restart or let it lapse, those with a stale ticket of an earlier place)
// get that ticket, with the longest lease a refusal gives (twice the
// thread wait time). A round that failed for the nodes that did not grant
// (still held there, or another's turn) must not cost the owner its turn
// where it was first; and a node that lost its place would otherwise make
// a later waiter first there, splitting every round between the two, for
// good once one more node fails (helper-93). A ticket fewer than a quorum
// answered is never spread: it may be a place the owner left, which a
// node missed (helper-94); such an owner queues again at the back.
func (e *Engine) requeue(t *round, op Op) bool {
	ticket, n := placeOf(t)
	if n < e.quorum {
		return false
	}
	var where []int
	for j, v := range t.votes {
		if v == yes || v == no && t.replies[j].Token != ticket { // granted: it left the queue there
			where = append(where, j)
		}
	}
	if len(where) > 0 {
		e.start(where, Op{Kind: OpEnqueue, Fair: true, Key: op.Aux, Value: op.Value, N: ticket, TTL: 2 * time.Duration(op.N) * time.Millisecond},
			e.opts.NodeTimeout, false).drain()
	}
	return true
}

// maxLeaving bounds the granted owners whose places leftQueue asks silent
// nodes again to remove.
const maxLeaving = 256

// leftQueue takes a fair acquire's granted owner out of the queue on every
// node, in the background: the nodes that granted it took it out
// themselves, but one that refused it or has not answered may keep its
// place, and be first there for a waiter that is not. A node that does
// not answer (paused, partitioned) is asked again, backing off, until it
// answers or the place would have lapsed anyway (twice the thread wait
// time), or the engine closes; at most maxLeaving owners at once are asked
// again (each try costs a command to every silent node): beyond that, a
// place a silent node kept lapses with its lease. Only the place with the
// ticket it left is removed: the owner may queue again meanwhile (a
// Redisson thread's every lock has the same owner name), with another
// ticket (enqueue).
func (e *Engine) leftQueue(t *round, op Op) {
	ticket, _ := placeOf(t)
	if ticket == 0 {
		return // it was not queued
	}
	leave := Op{Kind: OpDequeue, Key: op.Aux, Value: op.Value, N: ticket}
	until := time.Now().Add(2 * time.Duration(op.N) * time.Millisecond)
	e.monitors.Go(func() {
		defer e.leaving.Add(-1)
		again := e.leaving.Add(1) <= maxLeaving
		idx, pause := e.allIdx, 100*time.Millisecond
		for len(idx) > 0 && time.Now().Before(until) {
			r := e.start(idx, leave, e.opts.NodeTimeout, false)
			r.drain()
			var left []int
			for j, v := range r.votes {
				if v != yes && v != no {
					left = append(left, idx[j])
				}
			}
			if idx = left; len(idx) == 0 || !again {
				return
			}
			select {
			case <-e.life.Done():
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, 5*time.Second)
		}
	})
}

// QueueHeads reads fair queue queue's head on every node (the first waiter
// whose place has not lapsed) and returns the distinct ones: whom a
// release wakes. Nodes that miss the node timeout are left out.
func (e *Engine) QueueHeads(queue string) []string {
	if reservedKey(queue) != nil {
		return nil
	}
	t := e.start(nil, Op{Kind: OpQueueHead, Key: fairQueue(queue)}, e.opts.NodeTimeout, false)
	t.drain()
	var heads []string
	for j, v := range t.votes {
		if w := t.replies[j].Entry; v == yes && w.Found && !slices.Contains(heads, w.Value) {
			heads = append(heads, w.Value)
		}
	}
	return heads
}
