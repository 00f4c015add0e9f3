package quorum

import (
	"context"
	"time"
)

// Node is one independent Redis master as the engine sees it: the handful of
// single-node lock operations a Redlock round is made of. RedisNode implements
// it over go-redis; tests wrap it (or fake it) to inject faults.
//
// Every method must honour ctx's deadline: the engine bounds each call by the
// per-node timeout and decides without nodes that do not answer in time.
type Node interface {
	// Addr names the node in errors, logs and INFO.
	Addr() string
	// SetNX runs SET key value NX PX ttl; it reports whether the key was set.
	SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error)
	// DelIfEq deletes key if it holds value; it reports whether it deleted.
	DelIfEq(ctx context.Context, key, value string) (bool, error)
	// PExpireIfEq sets key's TTL if it holds value; it reports whether it did.
	PExpireIfEq(ctx context.Context, key, value string, ttl time.Duration) (bool, error)
	// Read returns key's value and remaining TTL as one consistent snapshot.
	Read(ctx context.Context, key string) (Entry, error)
	// Del deletes key whatever it holds; it reports whether the key existed.
	Del(ctx context.Context, key string) (bool, error)
	// Ping checks that the node answers.
	Ping(ctx context.Context) error
	// Close releases the node's connections.
	Close() error
}

// Entry is one node's view of a key.
type Entry struct {
	Found bool
	Value string
	// TTL is the remaining time to live; negative when the key has no expiry.
	TTL time.Duration
}
