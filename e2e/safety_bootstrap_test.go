package e2e

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/app"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// The fault suite's bootstrap row (issue 23 B1): once a deployment is
// marked, nothing an operator or another replica does ends a quarantine
// early.

// bootstrapAfterRestart: A's lock lands on backends 0-2 only, backend 0
// restarts empty and both replicas quarantine it; then `redlock-proxy
// bootstrap` is run against the deployment (it must refuse), and a marker
// naming backend 0's new run appears on it anyway (as a replica that
// believed the deployment new once wrote). B asks through both replicas
// until A's window ends: it must never win.
func bootstrapAfterRestart(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	ctx := context.Background()
	cs := [2]*redis.Client{suiteClient(addrs[0]), suiteClient(addrs[1])}
	defer cs[0].Close()
	defer cs[1].Close()
	e.toxic(3, "refuse", "reset_peer", "upstream", 1, `{"timeout":0}`)
	e.toxic(4, "refuse", "reset_peer", "upstream", 1, `{"timeout":0}`)
	if !e.awaitState(cs[0], 0, 3, "down") || !e.awaitState(cs[0], 0, 4, "down") {
		h.fail("not set up: backends 3 and 4 never down")
	}
	var sent time.Time
	var ok bool
	for end := time.Now().Add(10 * time.Second); !ok && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var err error
		sent = time.Now()
		ok, err = cs[0].SetNX(ctx, "lock:boot", "A", suiteMaxTTL).Result()
		h.attempt("lock:boot", "A", sent, time.Now(), suiteMaxTTL, ok, err, time.Time{})
	}
	if !ok {
		h.fail("not set up: A never took lock:boot")
		return
	}
	e.clearToxics()
	e.redis[0].Restart()
	for replica := range 2 {
		if !e.awaitState(cs[replica], replica, 0, "quarantined") {
			h.fail("not set up: backend 0 never quarantined on replica %d", replica+1)
		}
	}
	cfg := config.Default()
	for _, p := range e.tox[0] {
		cfg.Backends = append(cfg.Backends, config.Backend{Addr: p.Listen})
	}
	cfg.MaxTTL = suiteMaxTTL
	if err := app.BootstrapConfig(cfg, io.Discard); err == nil {
		h.fail("redlock-proxy bootstrap of a marked deployment with a restarted backend succeeded")
	}
	info, _ := e.redis[0].Client().Info(ctx, "server").Result()
	_, rest, _ := strings.Cut(info, "run_id:")
	runID := strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0])
	if err := e.redis[0].Client().Set(ctx, quorum.IntactKey, runID, 0).Err(); err != nil {
		h.fail("not set up: marker: %v", err)
	}
	for n := 0; time.Since(sent) < suiteMaxTTL-200*time.Millisecond; n++ {
		s := time.Now()
		ok, err := cs[n%2].SetNX(ctx, "lock:boot", fmt.Sprint("B", n), suiteMaxTTL).Result()
		h.attempt("lock:boot", fmt.Sprint("B", n), s, time.Now(), suiteMaxTTL, ok, err, time.Time{})
		if ok {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}
