package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// fencedLoad runs fenced acquires and releases of other keys (prefix:g:i,
// 50 keys per loader, TTL ttl) through both replicas (addr2 the second)
// from three loaders, so that the token raises of the keys under test are
// outbid now and then: one token counter per backend serves every key.
// Granted maps each token the load was answered to its key. Stop ends it.
func fencedLoad(t *testing.T, h *harness.Harness, addr2, prefix string, ttl time.Duration) (granted *sync.Map, stop func()) {
	ctx := t.Context()
	granted = &sync.Map{}
	var done atomic.Bool
	var load sync.WaitGroup
	for g := range 3 {
		c := h.Client(func(o *redis.Options) {
			o.PoolSize = 1
			if g%2 == 1 {
				o.Addr = addr2
			}
		})
		load.Go(func() {
			for i := 0; !done.Load(); i++ {
				key := fmt.Sprintf("%s:%d:%d", prefix, g, i%50)
				if n, err := c.Do(ctx, "LOCK.ACQUIRE", key, "L", ttl.Milliseconds()).Int64(); err == nil {
					granted.Store(n, key)
					_, _ = c.Do(ctx, "LOCK.RELEASE", key, "L").Result()
				}
			}
		})
	}
	return granted, func() { done.Store(true); load.Wait() }
}

// reattachStorm sends owner's re-attaches of key (batch pipelined
// LOCK.ACQUIRE key owner 2000 SESSION at a time) through c from after
// delay until stop closes, handing record every answer.
func reattachStorm(ctx context.Context, c *redis.Client, key, owner string, batch int, delay time.Duration, stop <-chan struct{}, record func(n int64, err error)) {
	time.Sleep(delay)
	for {
		select {
		case <-stop:
			return
		default:
		}
		p := c.Pipeline()
		cmds := make([]*redis.Cmd, batch)
		for j := range cmds {
			cmds[j] = p.Do(ctx, "LOCK.ACQUIRE", key, owner, 2000, "SESSION")
		}
		_, _ = p.Exec(ctx)
		for _, cmd := range cmds {
			n, err := cmd.Int64()
			record(n, err)
		}
	}
}
