package quorum

import (
	"context"
	"time"
)

// BeatGone and the others are what QueueBeats tells of each waiter.
const (
	BeatUnknown = iota // no quorum either way (a fault): try again next beat
	BeatQueued         // a quorum renewed its lease
	BeatGone           // so many nodes no longer queue it that it cannot be queued
)

// QueueBeats renews many waiters' leases on their places (QueueBeat's
// rules), in one operation per node for up to 128 waiters (scripts sent in
// the same pipelined write), instead of one round per waiter. beats are
// Key (the lock), Value (the waiter), TTL (the lease). It returns one
// verdict per beat: BeatQueued, BeatGone or BeatUnknown.
func (e *Engine) QueueBeats(ctx context.Context, beats []Lease) []int {
	out := make([]int, len(beats))
	if ctx.Err() != nil || len(beats) == 0 {
		return out
	}
	valid := make([]Lease, 0, len(beats))
	index := make([]int, 0, len(beats))
	for i, b := range beats {
		if reservedKey(b.Key) == nil {
			valid = append(valid, b)
			index = append(index, i)
		}
	}
	type batch struct {
		ch      <-chan answer
		from    int
		yes, no []int
	}
	deadline := time.Now().Add(e.opts.NodeTimeout)
	var batches []*batch
	for from := 0; from < len(valid); from += maxLeasesPerOp {
		part := valid[from:min(from+maxLeasesPerOp, len(valid))]
		b := &batch{from: from, yes: make([]int, len(part)), no: make([]int, len(part))}
		b.ch = e.send(nil, Op{Kind: OpQueueBeats, Leases: &part}, deadline)
		batches = append(batches, b)
	}
	dctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for _, b := range batches {
		for range e.nodes {
			var a answer
			select {
			case a = <-b.ch:
			case <-dctx.Done():
				select { // past the deadline: only the answers already in
				case a = <-b.ch:
				default:
				}
			}
			if a.reply.Err != nil || a.reply.Each == nil || len(*a.reply.Each) != len(b.yes) {
				continue
			}
			for j, ok := range *a.reply.Each {
				if ok {
					b.yes[j]++
				} else {
					b.no[j]++
				}
			}
		}
		for j := range b.yes {
			switch i := index[b.from+j]; {
			case b.yes[j] >= e.quorum:
				out[i] = BeatQueued
			case b.no[j] > len(e.nodes)-e.quorum:
				out[i] = BeatGone
			}
		}
	}
	return out
}
