package proxy

import (
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// serveSessions serves a proxy over nodes (quarantine off, no lock-delay,
// then extra; session tick 250 ms) until the test ends, and returns its
// address.
func serveSessions(t *testing.T, nodes []quorum.Node, extra ...quorum.Option) string {
	t.Helper()
	return serveLimited(t, nodes, nil, extra...)
}

// serveLimited is serveSessions with the limits limit sets (nil: the
// defaults), its session_tick 250 ms whatever they say.
func serveLimited(t *testing.T, nodes []quorum.Node, limit func(*Limits), extra ...quorum.Option) string {
	t.Helper()
	_, addr := serveRig(t, nodes, limit, nil, extra...)
	return addr
}

// serveRig is serveLimited with the server options srv too, returning the
// server as well.
func serveRig(t *testing.T, nodes []quorum.Node, limit func(*Limits), srv []Option, extra ...quorum.Option) (*Server, string) {
	t.Helper()
	opts := append([]quorum.Option{quorum.WithQuarantine(false), quorum.WithLockDelay(0, 0), quorum.WithLogger(slog.New(slog.DiscardHandler))}, extra...)
	e, err := quorum.New(nodes, opts...)
	if err != nil {
		t.Fatal(err)
	}
	lim := DefaultLimits()
	if limit != nil {
		limit(&lim)
	}
	s := New(e, append([]Option{WithLimits(lim), WithSessionTick(250 * time.Millisecond), WithLogger(slog.New(slog.DiscardHandler))}, srv...)...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close(); _ = e.Close() })
	return s, ln.Addr().String()
}

// dialOne is a one-connection client of addr, closed when the test ends.
func dialOne(t *testing.T, addr string, readTimeout time.Duration) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1, ReadTimeout: readTimeout})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// sessionWhenReady takes a session lock through c, trying for 30 s while
// the backends are not yet voting (their identity unread), and returns its
// token.
func sessionWhenReady(t *testing.T, c *redis.Client, key, owner string, ttl int) int64 {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		token, err := c.Do(t.Context(), "LOCK.ACQUIRE", key, owner, ttl, "SESSION").Int64()
		if err == nil {
			return token
		}
		if time.Now().After(deadline) {
			t.Fatalf("LOCK.ACQUIRE for 30s: %v", err)
		}
	}
}

// failingRuns runs run n times (its index given) and fails the test with
// how many runs returned a reason, and the last one.
func failingRuns(t *testing.T, n int, run func(i int) string) {
	t.Helper()
	failed, why := 0, ""
	for i := range n {
		if msg := run(i); msg != "" {
			failed, why = failed+1, msg
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d runs failed: %s", failed, n, why)
	}
}
