package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// The fault suite's row for the third safety review (issue 23 A and C):
// ordinary client commands aimed at the proxy's bookkeeping, and a plain
// lock's first token read at the same moment through both replicas, while
// a backend restarts empty.

// bookkeepingAttacks are commands that, before the review's fixes, reset
// the fencing counter, jammed it, freed a lock inside its lock-delay, forged
// a deployment marker or emptied a fair queue. Each must be refused.
var bookkeepingAttacks = [][]any{
	{"GET", "__redlock:token"},
	{"DEL", "__redlock:token"},
	{"SET", "__redlock:token", "x", "NX", "PX", 600000},
	{"EVAL", harness.UnlockScript, 1, "__redlock:token", "1"},
	{"EVAL", harness.UnlockScript, 1, "__redlock:m:{first}", "x"},
	{"SET", "__redlock:intact", "run", "NX", "PX", 10000},
	{"DEL", "__redlock:q:{first}", "__redlock:max_ttl", "__redlock:counters"},
	{"UNLINK", "{first}", "__redlock:intact"},
	{"PTTL", "__redlock:m:{first}"},
	{"EXISTS", "{first}", "__redlock:token"},
	{"LOCK.ACQUIRE", "__redlock:token", "me", 1000},
	{"REDLOCK", "FORCEUNLOCK", "__redlock:token"},
	{"PUBLISH", "__redlock:wait:{first}", "released"},
}

// firstTokensAndAttacks: owners take one key in turn with SET NX PX through
// replica 1; at each grant four readers (two per replica) ask LOCK.TOKEN at
// once, and all of them must be answered one token (or refused), larger
// than the last lock's. Meanwhile a hostile client sends
// bookkeepingAttacks through both replicas (each must be refused), and
// backend 2 restarts empty and leaves its quarantine.
func firstTokensAndAttacks(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	ctx := context.Background()
	cs := [2]*redis.Client{suiteClient(addrs[0]), suiteClient(addrs[1])}
	readers := [2]*redis.Client{ // room for two readers at once on each replica
		redis.NewClient(&redis.Options{Addr: addrs[0], MaxRetries: -1, PoolSize: 4, ReadTimeout: 10 * time.Second}),
		redis.NewClient(&redis.Options{Addr: addrs[1], MaxRetries: -1, PoolSize: 4, ReadTimeout: 10 * time.Second}),
	}
	for _, c := range append(cs[:], readers[:]...) {
		defer c.Close()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	refused := 0
	wg.Add(1)
	go func() { // the hostile client
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			cmd := bookkeepingAttacks[n%len(bookkeepingAttacks)]
			err := cs[n%2].Do(ctx, cmd...).Err()
			if err == nil || !strings.HasPrefix(err.Error(), "NOPERM") || !strings.Contains(err.Error(), "reserved") {
				h.fail("%v through replica %d: %v, want a refusal naming the reserved prefix", cmd, n%2+1, err)
				continue
			}
			refused++
		}
	}()

	const lease = 1500 * time.Millisecond
	var last int64
	read := 0
	take := func(n int) {
		owner := fmt.Sprint("F", n)
		sent := time.Now()
		ok, err := cs[0].SetNX(ctx, "{first}", owner, lease).Result()
		replied := time.Now()
		var released time.Time
		if ok {
			answers := make([]any, 4)
			var rw sync.WaitGroup
			for i := range answers {
				rw.Add(1)
				go func() {
					defer rw.Done()
					s := time.Now()
					t, err := readers[i%2].Do(ctx, "LOCK.TOKEN", "{first}", owner).Int64()
					h.token("{first}", owner, s, time.Now(), t, err)
					if err != nil {
						answers[i] = err
						return
					}
					answers[i] = t
				}()
			}
			rw.Wait()
			var token int64
			for _, a := range answers {
				switch a := a.(type) {
				case int64:
					if token != 0 && a != token {
						h.fail("one lock, two tokens: %v", answers)
					}
					token = a
				case error:
					if !errors.Is(a, redis.Nil) && !strings.HasPrefix(a.Error(), "NOQUORUM") {
						h.fail("LOCK.TOKEN of a SET NX PX lock: %v", a)
					}
				}
			}
			if token != 0 {
				if token <= last {
					h.fail("fixed fencing token %d after %d", token, last)
				}
				last, read = token, read+1
			}
			released = time.Now()
			_ = cs[0].Eval(ctx, harness.UnlockScript, []string{"{first}"}, owner).Err()
		}
		h.attempt("{first}", owner, sent, replied, lease, ok, err, released)
	}
	n := 0
	issue := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); n++ {
			take(n)
			time.Sleep(10 * time.Millisecond)
		}
	}
	issue(time.Second)
	e.redis[2].Restart()
	if !e.awaitState(cs[0], 0, 2, "quarantined") || !e.awaitState(cs[1], 1, 2, "quarantined") {
		h.fail("not set up: backend 2 never quarantined on both replicas")
	}
	issue(time.Second)
	if !e.awaitState(cs[0], 0, 2, "up") || !e.awaitState(cs[1], 1, 2, "up") {
		h.fail("not set up: backend 2 never left its quarantine")
	}
	issue(time.Second)
	close(stop)
	wg.Wait()
	if read < 5 {
		h.fail("not set up: only %d locks had their token read", read)
	}
	if refused < len(bookkeepingAttacks) {
		h.fail("not set up: only %d attacks sent", refused)
	}
}
