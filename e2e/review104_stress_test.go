package e2e

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// review104 stress: contenders for one key through two replicas, other
// keys' fenced load counting on whichever backends it wins (counters
// apart), random backends paused 30-250ms. Every grant's token must be
// above the one answered before it (grants of one key are sequential:
// each is taken after the last was released), and LOCK.TOKEN through the
// other replica answers the grant's token or nil.
func TestReview104OneRoundStress(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, func(c *config.Config) {
		c.NodeTimeout = 100 * time.Millisecond
		c.SessionTick = 250 * time.Millisecond
	})
	ctx := t.Context()
	_, addr2 := h.Serve()
	_, stopLoad := fencedLoad(t, h, addr2, "r104s:load", 3*time.Second)
	defer stopLoad()
	defer pauseNemesis(h, func(i int) (int, time.Duration, time.Duration) {
		return (i * 3) % 5, time.Duration(10+(i*37)%150) * time.Millisecond, time.Duration(30+(i*53)%220) * time.Millisecond
	})()
	type grant struct {
		at   time.Time
		tok  int64
		who  string
		sess bool
	}
	var (
		mu     sync.Mutex
		grants []grant
		bad    []string
	)
	key := "r104s:k"
	deadline := time.Now().Add(20 * time.Second)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			addr, other := h.Addr, addr2
			if w%2 == 1 {
				addr, other = addr2, h.Addr
			}
			c := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr, 1 })
			rd := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = other, 1 })
			owner := fmt.Sprintf("o%d", w)
			for i := 0; time.Now().Before(deadline); i++ {
				args := []any{"LOCK.ACQUIRE", key, owner, 2000}
				sess := i%3 == 0
				if sess {
					args = append(args, "SESSION")
				}
				tok, err := c.Do(ctx, args...).Int64()
				at := time.Now()
				if err != nil || tok <= 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				mu.Lock()
				grants = append(grants, grant{at, tok, owner, sess})
				mu.Unlock()
				if n, err := rd.Do(ctx, "LOCK.TOKEN", key, owner).Int64(); err == nil && n != tok {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%s granted %d, LOCK.TOKEN through the other replica %d", owner, tok, n))
					mu.Unlock()
				}
				if sess {
					if n, err := rd.Do(ctx, "LOCK.ACQUIRE", key, owner, 2000, "SESSION").Int64(); err == nil && n != tok {
						mu.Lock()
						bad = append(bad, fmt.Sprintf("%s granted %d, re-attach through the other replica %d", owner, tok, n))
						mu.Unlock()
					}
					_, _ = rd.Do(ctx, "LOCK.RELEASE", key, owner).Result()
				}
				_, _ = c.Do(ctx, "LOCK.RELEASE", key, owner).Result()
			}
		})
	}
	wg.Wait()
	sort.Slice(grants, func(i, j int) bool { return grants[i].at.Before(grants[j].at) })
	for i := 1; i < len(grants); i++ {
		if grants[i].tok <= grants[i-1].tok {
			t.Errorf("token went down: %s %d at %s, then %s %d at %s", grants[i-1].who, grants[i-1].tok, grants[i-1].at.Format("15:04:05.000"),
				grants[i].who, grants[i].tok, grants[i].at.Format("15:04:05.000"))
		}
	}
	for _, b := range bad {
		t.Error(b)
	}
	t.Logf("%d grants", len(grants))
}
