package quorum

import (
	"context"
	"time"
)

// Node is one independent Redis master as the engine sees it: a queue of
// single-node lock operations. RedisNode implements it over go-redis,
// batching the operations of many rounds into one pipelined write; tests
// implement it with injected faults.
//
// Do must not block: it queues op and the node later calls done exactly
// once, from any goroutine. The node should answer by deadline; the engine
// stops counting on it then, but still waits for its late answer before it
// rolls back or lets the same owner start another round.
type Node interface {
	// Addr names the node in errors, logs and INFO.
	Addr() string
	Do(op Op, deadline time.Time, done func(Reply))
	// Info reads the node's identity and persistence; the engine's health
	// monitor calls it, off the lock path.
	Info(ctx context.Context) (NodeInfo, error)
	// Keys lists up to limit keys that start with prefix (SCAN); the admin
	// view uses it, off the lock path.
	Keys(ctx context.Context, prefix string, limit int) ([]string, error)
	// Watch registers f, which the node calls with fresh NodeInfo each time
	// it opens a connection, before that connection carries any operation:
	// a backend that restarted is known as such before it can vote.
	Watch(f func(NodeInfo))
	// Close stops the node; operations still queued fail.
	Close() error
}

// NodeInfo identifies one run of a backend.
type NodeInfo struct {
	RunID  string        // changes when the backend restarts
	Uptime time.Duration // since it started
	// Persistent: every write is fsynced before it is acknowledged
	// (appendonly yes, appendfsync always), so a restart loses no lock.
	Persistent bool
}

// OpKind is what a single-node operation does.
type OpKind uint8

// The single-node operations a round is made of.
const (
	OpSetNX       OpKind = iota + 1 // SET Key Value NX PX TTL; OK: it was set
	OpDelIfEq                       // delete Key if it holds Value; OK: deleted
	OpPExpireIfEq                   // set Key's TTL if it holds Value; OK: done
	OpRead                          // Key's value and TTL in one snapshot: Entry
	OpDel                           // delete Key whatever it holds; OK: it existed
)

// Op is one single-node operation.
type Op struct {
	Kind  OpKind
	Key   string
	Value string
	TTL   time.Duration
}

// Reply is one node's answer to an Op.
type Reply struct {
	OK    bool
	Entry Entry // OpRead
	Err   error
}

// Entry is one node's view of a key.
type Entry struct {
	Found bool
	Value string
	// TTL is the remaining time to live; negative when the key has no expiry.
	TTL time.Duration
}

// ctxFor is the context a node call runs under: the deadline, nothing else.
func ctxFor(deadline time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), deadline)
}
