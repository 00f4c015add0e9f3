package e2e

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// permitsAcrossFaults: Redisson's RPermitExpirableSemaphore through both
// replicas, six clients taking permits of a 1-permit and a 2-permit
// semaphore over and over, while two backends pause, one restarts empty
// (and sits out its quarantine) and two others pause. Every grant is
// recorded: the 1-permit one never has two holders inside their windows
// (the history's check), the 2-permit one never three (counted here).
func permitsAcrossFaults(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	const lease = 1500
	names := [2]string{"{semsuite}:one", "{semsuite}:two"}
	type window struct{ start, end time.Time }
	var mu sync.Mutex
	var two []window // the 2-permit semaphore's holds
	for i, name := range names {
		p := permitClient{suiteClient(addrs[0]), name}
		if v, err := p.trySet(e.t, i+1); v != 1 || err != nil {
			h.fail("trySetPermits(%d) of %s = %v, %v", i+1, name, v, err)
		}
		p.c.Close()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			c := suiteClient(addrs[w%2])
			defer c.Close()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				p := permitClient{c, names[(w+n)%2]}
				owner, id := fmt.Sprintf("sem%d-%d", w, n), newPermitID()
				sent := time.Now()
				v, err := p.acquire(e.t, id, lease)
				replied := time.Now()
				ok := err == nil && v == "OK"
				var released time.Time
				if ok {
					time.Sleep(time.Duration(5+n%20) * time.Millisecond)
					released = time.Now()
				}
				if ok || err != nil { // a failed round's client gives its id back, as Redisson does
					if r, rerr := p.release(e.t, id); rerr != nil && !isNoQuorum(rerr) || ok && rerr == nil && r != 1 && time.Since(sent) < lease*time.Millisecond/2 {
						h.fail("%s's release = %v, %v", owner, r, rerr)
					}
				}
				if p.name == names[0] {
					h.attempt(p.name, owner, sent, replied, lease*time.Millisecond, ok, err, released)
				} else {
					h.attemptRW(p.name, owner, true, sent, replied, lease*time.Millisecond, ok, err, released)
					if ok {
						mu.Lock()
						end := sent.Add(lease * time.Millisecond)
						if released.Before(end) {
							end = released
						}
						two = append(two, window{replied, end})
						mu.Unlock()
					}
				}
				if err == nil && strings.HasPrefix(v, ":") { // told when a permit lapses: wait a little, not that long
					at, _ := strconv.ParseInt(v[1:], 10, 64)
					time.Sleep(min(time.Until(time.UnixMilli(at)), time.Duration(10+n%30)*time.Millisecond))
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	time.Sleep(2 * time.Second)
	e.pausesAndARestart(addrs, h)
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	// The 2-permit semaphore: at no instant three windows.
	type edge struct {
		at   time.Time
		step int
	}
	var edges []edge
	for _, w := range two {
		edges = append(edges, edge{w.start, 1}, edge{w.end, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.step - b.step // an end before a start at the same instant
	})
	held, most := 0, 0
	for _, x := range edges {
		held += x.step
		if held > 2 {
			h.fail("%s: %d holders at %s, of 2 permits", names[1], held, x.at.Format("15:04:05.000"))
		}
		most = max(most, held)
	}
	if len(two) < 20 || most < 2 {
		h.fail("not set up: %d grants of %s, at most %d held at once", len(two), names[1], most)
	}
}

// permitsOverMajorities builds the hazard of a permit counter kept by
// majority (issue 26): a 2-permit semaphore taken by A on backends 0-2, B
// on 2-4 and C on 0, 1 and 3 (the others refuse connections each time),
// all inside A's window. No backend holds more than two, so a counter
// taken on a majority lets all three in; as slots, C's majority has A's
// slot on two backends and B's on the third, and C is refused.
func permitsOverMajorities(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	const name = "{semsuite}:majorities"
	cs := [2]*redis.Client{suiteClient(addrs[0]), suiteClient(addrs[1])}
	defer cs[0].Close()
	defer cs[1].Close()
	if v, err := (permitClient{cs[0], name}).trySet(e.t, 2); v != 1 || err != nil {
		h.fail("not set up: trySetPermits(2) = %v, %v", v, err)
	}
	only := func(replica int, up ...int) {
		e.clearToxics()
		for i := range e.redis {
			if !slices.Contains(up, i) {
				e.toxic(i, "refuse", "reset_peer", "upstream", 1, `{"timeout":0}`)
			} else if !e.awaitAnswering(cs[replica], replica, i) {
				h.fail("not set up: backend %d never answered on replica %d", i, replica+1)
			}
		}
	}
	lease := suiteMaxTTL
	var holders []string
	var first time.Time
	take := func(replica int, who string, tries int) {
		p := permitClient{cs[replica], name}
		for n := range tries {
			sent := time.Now()
			v, err := p.acquire(e.t, newPermitID(), lease.Milliseconds())
			ok := err == nil && v == "OK"
			h.attemptRW(name, fmt.Sprint(who, n), true, sent, time.Now(), lease, ok, err, time.Time{})
			if ok {
				if first.IsZero() {
					first = sent
				}
				holders = append(holders, who)
				return
			}
		}
	}
	only(0, 0, 1, 2)
	take(0, "A", 5)
	only(1, 2, 3, 4)
	take(1, "B", 10) // the backends give B its slot from a random one on: the one A's is not, in half the tries
	only(0, 0, 1, 3)
	take(0, "C", 5)
	inWindow := time.Since(first) < lease-200*time.Millisecond
	e.clearToxics()
	switch {
	case len(holders) > 2 && inWindow:
		h.fail("%v all hold one of 2 permits", holders)
	case len(holders) < 2 || holders[0] != "A" || holders[1] != "B" || !inWindow:
		h.fail("not set up: %v granted, %v after A's try (its lease %v)", holders, time.Since(first), lease)
	}
}
