package e2e

// One lock, one token: the first LOCK.TOKEN of a SET NX PX lock, read at
// the same moment through two replicas, fixes one token that every reader
// is answered (issue 23 C).

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestFirstTokenReadsAgreeAcrossReplicas(t *testing.T) {
	h := harness.New(t, 5, nil)
	_, addr2 := h.Serve()
	ctx := t.Context()
	const readers, keys = 8, 40
	clients := make([]*redis.Client, readers)
	for i := range clients {
		addr := h.Addr
		if i%2 == 1 {
			addr = addr2
		}
		clients[i] = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: 10 * time.Second, PoolSize: 1})
		defer clients[i].Close()
		if err := clients[i].Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	split := 0
	for k := range keys {
		key := fmt.Sprint("fix:", k)
		if err := clients[k%2].SetNX(ctx, key, "holder", 30*time.Second).Err(); err != nil {
			t.Fatal(err)
		}
		var (
			wg      sync.WaitGroup
			start   = make(chan struct{})
			answers = make([]int64, readers)
			errs    = make([]error, readers)
		)
		for i, c := range clients {
			wg.Go(func() {
				<-start
				answers[i], errs[i] = c.Do(ctx, "LOCK.TOKEN", key).Int64()
			})
		}
		close(start)
		wg.Wait()
		var first int64
		for i, a := range answers {
			if errs[i] != nil {
				// A refusal (NOQUORUM) is allowed: never a second token.
				t.Logf("%s reader %d: %v", key, i, errs[i])
				continue
			}
			if first == 0 {
				first = a
			}
			if a != first {
				split++
				t.Errorf("%s: readers were answered different tokens: %v", key, answers)
				break
			}
		}
		if first == 0 {
			t.Fatalf("%s: no reader got a token: %v", key, errs)
		}
		if later, err := clients[1].Do(ctx, "LOCK.TOKEN", key).Int64(); err != nil || later != first {
			t.Errorf("%s: a later read answers %d, %v; the first readers got %d", key, later, err, first)
		}
	}
	if split > 0 {
		t.Fatalf("%d of %d locks got two tokens", split, keys)
	}
}
