package proxy

// Test rigs for re-attaches through one or two replicas: a gate that holds
// one kind of op on one key (or its replies), a replica over real
// redis-servers behind it, and a dump of the lock's notes for failures.

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// gate holds the ops of one kind on one key, on every node it wraps, while
// it is shut; it counts those held and those answered.
type gate struct {
	kind quorum.OpKind
	key  string
	// late: the op runs on the node at once; its reply is held instead.
	late bool

	mu   sync.Mutex
	shut bool
	open chan struct{}

	held, answered atomic.Int32
}

func newGate(kind quorum.OpKind, key string) *gate {
	return &gate{kind: kind, key: key, open: make(chan struct{})}
}

func (g *gate) close() { g.mu.Lock(); g.shut = true; g.mu.Unlock() }

func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		g.shut = false
		close(g.open)
	}
}

// waitFor waits until n is at least want.
func waitFor(t *testing.T, what string, n *atomic.Int32, want int32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); n.Load() < want; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("setup: %s: %d of %d in 10s", what, n.Load(), want)
		}
	}
}

type gated struct {
	quorum.Node
	g *gate
}

func (n gated) Do(op quorum.Op, deadline time.Time, done quorum.Done) {
	if op.Kind != n.g.kind || op.Key != n.g.key {
		n.Node.Do(op, deadline, done)
		return
	}
	count := quorum.DoneFunc(func(r quorum.Reply) { done.Done(r); n.g.answered.Add(1) })
	n.g.mu.Lock()
	shut, open := n.g.shut, n.g.open
	n.g.mu.Unlock()
	if !shut {
		n.Node.Do(op, deadline, count)
		return
	}
	n.g.held.Add(1)
	if n.g.late {
		n.Node.Do(op, deadline, quorum.DoneFunc(func(r quorum.Reply) {
			go func() { <-open; count(r) }()
		}))
		return
	}
	go func() {
		<-open
		n.Node.Do(op, deadline, count)
	}()
}

// replicaOver serves a proxy over addrs, each node behind g (if any).
func replicaOver(t *testing.T, addrs []string, g *gate) string {
	var nodes []quorum.Node
	for _, a := range addrs {
		var n quorum.Node = backend.NewNode(&redis.Options{Addr: a})
		if g != nil {
			n = gated{Node: n, g: g}
		}
		nodes = append(nodes, n)
	}
	return serveSessions(t, nodes, quorum.WithNodeTimeout(5*time.Second))
}
