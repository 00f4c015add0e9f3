package backend

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Node is a quorum.Node over one backend. Operations queue up; a worker
// takes everything queued and sends it as one pipelined write on its own
// connection (link.go), so that one lock round costs a backend a fraction
// of a write. With the queue empty a
// lone operation goes out at once: nothing waits on a timer.
//
// go-redis's own AutoPipeline (blocking face) was measured first, on the
// same redis-benchmark load: it did not beat one pooled call per operation
// (both about 8k lock rounds/s at N=5 on the 2-core dev machine), while this
// queue reached about 22k, and it needs no goroutine per node per round.
type Node struct {
	client *redis.Client
	opt    *redis.Options // the link dials with these (link.go)
	addr   string
	link   *link   // the lock path's connection: the worker's own
	enc    encoder // the worker's: each call's keys and arguments
	vals   []any   // the worker's: a batch's replies
	errs   []error
	fixed  atomic.Pointer[identity] // given by SetIdentity, for servers that report none

	watchMu sync.Mutex
	watch   func(quorum.NodeInfo)

	mu     sync.Mutex
	queue  []call
	spare  []call // the last batch's slice, reused
	closed bool
	wake   chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup
}

type call struct {
	op       quorum.Op
	deadline time.Time
	done     quorum.Done
}

// pipelines is how many batches may be in flight to one backend at once:
// one measured better than two on loopback: replies come back while the
// next batch fills, and deeper batches cost fewer writes.
const pipelines = 1

// NewNode connects to one backend. Whatever opt says, it never retries a
// command (a resent SET could land twice in one round and a silent retry
// hides a failure from the vote), dials once per attempt, and bounds every
// call by its deadline.
func NewNode(opt *redis.Options) *Node {
	o := *opt
	o.MaxRetries = -1
	o.ContextTimeoutEnabled = true
	o.DisableIdentity = true
	o.DialerRetries = 1 // a refused dial is a vote against, now; not five tries later
	n := &Node{
		addr: o.Addr,
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
	}
	onConnect := o.OnConnect
	o.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		if onConnect != nil {
			if err := onConnect(ctx, cn); err != nil {
				return err
			}
		}
		info, err := readInfo(ctx, redisInfo{cn}, n.fixed.Load())
		var rerr *quorum.ReplyError
		if errors.As(err, &rerr) {
			return nil // the backend answers but will not say who it is (ACL, or not Redis)
		}
		if err != nil {
			return fmt.Errorf("reading run_id on connect: %w", err)
		}
		n.watchMu.Lock()
		f := n.watch
		n.watchMu.Unlock()
		if f != nil {
			f(info)
		}
		return nil
	}
	n.client = redis.NewClient(&o)
	n.opt = &o
	for range pipelines {
		n.wg.Add(1)
		go n.worker()
	}
	return n
}

// Addr implements quorum.Node.
func (n *Node) Addr() string { return n.addr }

// Do implements quorum.Node.
func (n *Node) Do(op quorum.Op, deadline time.Time, done quorum.Done) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		done.Done(quorum.Reply{Err: quorum.ErrClosed})
		return
	}
	n.queue = append(n.queue, call{op: op, deadline: deadline, done: done})
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default: // a worker is already due to look
	}
}

// Close implements quorum.Node: queued operations fail, then the client
// closes. Closing again does nothing.
func (n *Node) Close() error {
	n.mu.Lock()
	already := n.closed
	n.closed = true
	n.mu.Unlock()
	if already {
		return nil
	}
	close(n.stop)
	n.wg.Wait()
	n.dropLink() // the worker is gone: its link is no one's
	for _, c := range n.take() {
		c.done.Done(quorum.Reply{Err: quorum.ErrClosed})
	}
	return n.client.Close()
}

func (n *Node) worker() {
	defer n.wg.Done()
	for {
		select {
		case <-n.wake:
		case <-n.stop:
			return
		}
		for batch := n.take(); len(batch) > 0; batch = n.take() {
			n.exec(batch)
			n.recycle(batch)
		}
	}
}

// maxBatchWork bounds one pipeline's work, in locks (a renewal counts one
// per lease, any other operation one): a batch's replies all come back
// when its last command ran, so a pipeline of ten thousand locks would
// hold a lone round's answer as long as all of them take (issue 25). With
// 512, a round waits behind a few milliseconds of renewals at most.
const maxBatchWork = 512

// take removes the oldest queued operations, up to maxBatchWork locks of
// work (at least one operation).
func (n *Node) take() []call {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.queue) == 0 {
		return nil // the queue keeps its buffer: swapped for the spare, one would be lost each time the worker looks
	}
	work, cut := 0, len(n.queue)
	for i, c := range n.queue {
		w := 1
		if c.op.Leases != nil {
			w = len(*c.op.Leases)
		}
		if i > 0 && work+w > maxBatchWork {
			cut = i
			break
		}
		work += w
	}
	if cut < len(n.queue) {
		batch := append([]call(nil), n.queue[:cut]...)
		rest := copy(n.queue, n.queue[cut:])
		clear(n.queue[rest:])
		n.queue = n.queue[:rest]
		return batch
	}
	batch := n.queue
	n.queue, n.spare = n.spare[:0], nil
	return batch
}

func (n *Node) recycle(batch []call) {
	clear(batch) // drop references to callbacks
	n.mu.Lock()
	if n.spare == nil && cap(batch) <= 4096 {
		n.spare = batch[:0]
	}
	n.mu.Unlock()
}

// exec sends a batch as one pipeline and answers every call in it.
func (n *Node) exec(batch []call) {
	now := time.Now()
	latest := now
	live := batch[:0] // filtered in place: the write index never passes the read index
	for _, c := range batch {
		if !c.deadline.After(now) {
			c.done.Done(quorum.Reply{Err: context.DeadlineExceeded}) // waited too long in the queue
			continue
		}
		live = append(live, c)
		if c.deadline.After(latest) {
			latest = c.deadline
		}
	}
	if len(live) == 0 {
		return
	}
	n.vals, n.errs = resize(n.vals, len(live)), resize(n.errs, len(live))
	vals, errs := n.vals, n.errs
	n.send(live, latest, false, vals, errs)
	// A backend that restarted or flushed its scripts answers NOSCRIPT to
	// EVALSHA: send those again as EVAL, which also reloads the script.
	var retry []call
	var at []int
	for i, err := range errs {
		if rerr, ok := err.(*quorum.ReplyError); ok && strings.HasPrefix(rerr.Msg, "NOSCRIPT") {
			retry, at = append(retry, live[i]), append(at, i)
		}
	}
	if len(retry) > 0 {
		again, againErrs := make([]any, len(retry)), make([]error, len(retry))
		n.send(retry, latest, true, again, againErrs)
		for j, i := range at {
			vals[i], errs[i] = again[j], againErrs[j]
		}
	}
	for i, c := range live {
		c.done.Done(replyOf(c.op, vals[i], errs[i]))
	}
	clear(vals) // no reply outlives its batch here
	clear(errs)
}

// resize returns s (or a larger slice) with length n.
func resize[T any](s []T, n int) []T {
	if cap(s) < n || cap(s) > 4096 && n < 1024 {
		return make([]T, n)
	}
	return s[:n]
}

// send writes calls as one batch on the link (EVAL with eval, else
// EVALSHA) and reads their replies under deadline into vals and errs (as
// long as calls): each call's value and error (a server's error reply is a
// *quorum.ReplyError). A transport error fails the calls it left
// unanswered and drops the link.
func (n *Node) send(calls []call, deadline time.Time, eval bool, vals []any, errs []error) {
	fail := func(from int, err error) {
		for i := from; i < len(calls); i++ {
			errs[i] = err
		}
		n.dropLink()
	}
	l, err := n.linkFor(deadline)
	if err != nil {
		fail(0, err)
		return
	}
	l.out = l.out[:0]
	for _, c := range calls {
		s := n.enc.command(c.op)
		l.out = appendScript(l.out, s, eval, n.enc.keys, n.enc.args)
	}
	if err := l.send(deadline); err != nil {
		fail(0, err)
		return
	}
	for i := range calls {
		v, err := readReply(l.r)
		if _, server := err.(*quorum.ReplyError); err != nil && !server { // readReply returns a server's error unwrapped
			fail(i, err)
			return
		}
		vals[i], errs[i] = v, err
	}
}
