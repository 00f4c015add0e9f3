package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview98PipelinedAcquireThenRelease: one connection pipelines
// tryAcquire(X), release(X), acquiredPermits, as a client may: one Redis
// runs them in order (OK, 1, 0).
func TestReview98PipelinedAcquireThenRelease(t *testing.T) {
	h := harness.New(t, 5, nil)
	c := h.Client()
	s := &r98Sem{t: t, c: c, name: "r98:pipe"}
	s.mustTrySet(3)
	ctx := context.Background()
	for round := range 20 {
		x := r98ID()
		now := time.Now().UnixMilli()
		pipe := c.Pipeline()
		a := pipe.Eval(ctx, r98Script(t, r98Acquire), []string{s.name, s.timeouts(), s.channel()}, 1, now+5000, now, "922337203685477", "PUBLISH", x)
		r := pipe.Eval(ctx, r98Script(t, r98Release), []string{s.name, s.channel(), s.timeouts()}, x, 1, now, "PUBLISH")
		n := pipe.Eval(ctx, r98Script(t, r98Acquired), []string{s.name, s.timeouts(), s.channel()}, now, "PUBLISH")
		_, _ = pipe.Exec(ctx)
		av, aerr := a.Result()
		rv, rerr := r.Result()
		nv, nerr := n.Result()
		if !r98Granted(av, aerr) || rerr != nil || rv != int64(1) || nerr != nil || nv != int64(0) {
			t.Fatalf("round %d: pipelined acquire, release, acquiredPermits = %s, %s, %s; one Redis answers OK, 1, 0",
				round, r98Show(av, aerr), r98Show(rv, rerr), r98Show(nv, nerr))
		}
	}
	_ = redis.Nil
}
