package e2e

// helper-98's review (of commit c9ed6f1): helpers that speak Redisson's
// RPermitExpirableSemaphore scripts, as recorded in
// compat/transcripts/redisson-3.52.0-permitsemaphore-redis.jsonl.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	r98Acquire    = "992c96b09a3d8ea0b37f5dc12e5347a44d93909d"
	r98Release    = "4ce079451bee2993ce00c8a4e205b536c6ccad67"
	r98ReleaseAll = "cf3ab77b1c0ae1226ae0e06e5cb18ee75f56c96b"
	r98Available  = "26b3972b2c9e617556282f404cb79709d746a713"
	r98Acquired   = "6f0b0be79a0c146c778cb14f40c10eb5b706e574"
	r98Total      = "e242db5c1c68811b0d26a41937dcf22415b6d872"
	r98Set        = "494d8561fee0cdb033f6c28d74c052c52189a578"
	r98TrySet     = "241ce4e87e652b4f9b39d33cbcd7df9ee8ed906c"
	r98Add        = "ec6fb1cd5f66817424e8fe70fee7929391b7c6f0"
	r98Lease      = "2298b02cc67a89f2a638e47503db3675c73d77f5"
	r98LeaseLeft  = "8be95cb5221cc7ee883cacb8859a8b32ef501a0e"
)

func r98Script(t testing.TB, sha string) string { return clientScript(t, sha) }

// r98Sem is one RPermitExpirableSemaphore as Redisson names it.
type r98Sem struct {
	t    testing.TB
	c    *redis.Client
	name string
}

func (s *r98Sem) timeouts() string { return "{" + s.name + "}:timeout" }
func (s *r98Sem) channel() string  { return "redisson_sc:{" + s.name + "}" }

func r98ID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *r98Sem) eval(ctx context.Context, sha string, keys []string, args ...any) (any, error) {
	return s.c.Eval(ctx, r98Script(s.t, sha), keys, args...).Result()
}

// acquire sends tryAcquire of ids with a lease (ms) at the client's clock
// now; it returns the raw reply ("OK", ":<ms>", nil) and the send time.
func (s *r98Sem) acquireAt(ctx context.Context, leaseMS int64, ids ...string) (any, time.Time, error) {
	sent := time.Now()
	clock := sent.UnixMilli()
	args := []any{len(ids), clock + leaseMS, clock, "922337203685477", "PUBLISH"}
	for _, id := range ids {
		args = append(args, id)
	}
	v, err := s.eval(ctx, r98Acquire, []string{s.name, s.timeouts(), s.channel()}, args...)
	return v, sent, err
}

func (s *r98Sem) acquire(leaseMS int64, ids ...string) (any, error) {
	v, _, err := s.acquireAt(context.Background(), leaseMS, ids...)
	return v, err
}

func (s *r98Sem) release(id string) (any, error) {
	return s.eval(context.Background(), r98Release, []string{s.name, s.channel(), s.timeouts()}, id, 1, time.Now().UnixMilli(), "PUBLISH")
}

func (s *r98Sem) trySet(n int) (any, error) {
	return s.eval(context.Background(), r98TrySet, []string{s.name, s.channel()}, n, "PUBLISH")
}

func (s *r98Sem) updateLease(id string, leaseMS int64) (any, error) {
	clock := time.Now().UnixMilli()
	return s.eval(context.Background(), r98Lease, []string{s.name, s.timeouts(), s.channel()}, id, clock+leaseMS, clock, "PUBLISH")
}

func (s *r98Sem) acquired() (any, error) {
	return s.eval(context.Background(), r98Acquired, []string{s.name, s.timeouts(), s.channel()}, time.Now().UnixMilli(), "PUBLISH")
}

func (s *r98Sem) mustTrySet(n int) {
	s.t.Helper()
	if v, err := s.trySet(n); err != nil || v != int64(1) {
		s.t.Fatalf("trySetPermits(%d) = %v, %v", n, v, err)
	}
}

func (s *r98Sem) mustAcquire(leaseMS int64, ids ...string) {
	s.t.Helper()
	if v, err := s.acquire(leaseMS, ids...); err != nil || v != "OK" {
		s.t.Fatalf("tryAcquire(%v, lease %dms) = %v, %v; want OK", ids, leaseMS, v, err)
	}
}

func r98Granted(v any, err error) bool { return err == nil && v == "OK" }

func r98Show(v any, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	return fmt.Sprintf("%#v", v)
}
