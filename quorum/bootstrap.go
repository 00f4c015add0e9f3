package quorum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SeedPerMs is how far apart the fencing counter seeds of two moments one
// millisecond apart are: a deployment marked at wall-clock time t (unix ms)
// starts its token counter at t*SeedPerMs (CounterSeed). Tokens given
// before a total wipe stay below the seed after it as long as the counters
// grew by fewer than SeedPerMs per millisecond on average (see Fencing
// tokens after a total wipe in doc.go).
const SeedPerMs = 1000

// CounterSeed is the value a fencing token counter starts from when a
// deployment is marked at now (bootstrap, or every backend found unmarked).
func CounterSeed(now time.Time) int64 { return max(now.UnixMilli(), 0) * SeedPerMs }

// ErrNotNew says a backend is not part of a new deployment: Bootstrap
// changed nothing on it.
var ErrNotNew = errors.New("not a new deployment")

// Bootstrap is the operator's one-time act that marks the backends of a
// new deployment, so that replicas count them at once instead of waiting
// out the quarantine window: it marks each backend for its current run and
// seeds its token counter from the wall clock (CounterSeed). It refuses,
// changing nothing, unless every node answers, is a distinct server,
// carries no deployment marker (a deployment marked once is never
// bootstrapped again), carries no max-TTL record (no replica has seen it
// since it started: a running replica would have written one) and is
// younger than window (an older one may hold locks). Each node is marked
// by a script that checks the marker and the record again (Node.MarkNew),
// so a replica that meets a node between the check and the mark makes
// that mark refuse. It returns what it did per node, one line each.
func Bootstrap(ctx context.Context, nodes []Node, window time.Duration) ([]string, error) {
	infos := make([]NodeInfo, len(nodes))
	var why []string
	seen := map[string]string{}
	for i, n := range nodes {
		info, err := n.Info(ctx)
		infos[i] = info
		reason := ""
		switch {
		case err != nil:
			reason = "did not answer: " + err.Error()
		case info.Marked:
			reason = "carries a deployment marker: this deployment was bootstrapped or has run before, and is never bootstrapped again"
		case info.MaxTTL > 0:
			reason = "a replica has already seen it since it started (its max-TTL record is there): it may hold locks"
		case info.Uptime >= window:
			reason = fmt.Sprintf("up %s, longer than the quarantine window %s: it may hold locks", info.Uptime.Round(time.Second), window)
		case seen[info.RunID] != "":
			reason = "the same server as " + seen[info.RunID] + " (same run_id): list each server once"
		}
		if reason != "" {
			why = append(why, n.Addr()+": "+reason)
		}
		seen[info.RunID] = n.Addr()
	}
	if len(why) > 0 {
		return nil, fmt.Errorf("bootstrap refused, nothing was marked (backends keep their restart quarantine):\n  %s", strings.Join(why, "\n  "))
	}
	seed := CounterSeed(time.Now())
	var done []string
	for i, n := range nodes {
		if err := n.MarkNew(ctx, infos[i].RunID, map[string]int64{TokenKey: seed}); err != nil {
			return done, fmt.Errorf("bootstrap stopped at %s: %w; the backends marked so far are listed, the rest keep their restart quarantine", n.Addr(), err)
		}
		done = append(done, fmt.Sprintf("%s: marked as new (run_id %s), token counter seeded at %d", n.Addr(), infos[i].RunID, seed))
	}
	return done, nil
}

// BootstrapWindow is the quarantine window engines with settings s grant
// locks within: a backend younger than it may hold none of theirs yet.
func BootstrapWindow(s Settings) time.Duration {
	e := Engine{opts: options{Settings: s}}
	return e.ownWindow()
}
