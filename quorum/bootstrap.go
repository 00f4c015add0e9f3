package quorum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Fencing tokens after a total wipe (doc.go's section of that name points here).
//
// A wipe of every node (a power loss) loses every counter; no engine keeps
// them. Tokens still increase across it, within a stated bound. Whenever a
// deployment is marked whole (Bootstrap, or tendCounters finding no marked
// node), each node's shared counter (TokenKey) is raised to at least the
// seed S = c*SeedPerMs, c the marking engine's wall clock in unix ms
// (CounterSeed). This covers the tokens of fenced string locks
// (AcquireFenced, TokenOf). Per-key counters (Redisson's RFencedLock, whose
// tokens match one Redis's: 1, 2, 3 ...) are not seeded and start again
// after a total wipe.
//
// Let M be the largest counter on any node. Between seeds every counter
// write is an INCR (each node's counter +1 per grant, so M +1 at most per
// grant), a raise to a token (the largest of some counters, or one more on
// an outbid: M +1 at most, once per grant or token fix), or a repair
// (copies of counters: M unchanged). So M grows
// by at most 2 per fenced acquire round or token fix. Say the deployment
// was last seeded at real time r0 with clock reading c0 (S0 = 1000*c0; 0
// for one never seeded), and wiped at real time w. The nodes count again,
// and so are re-marked, only after the quarantine window W since they
// started (the uptime rule, whatever an engine saw): the new seed is taken
// at r1 >= w + W with reading c1. Every token before the wipe is at most
// S0 + 2G, G the rounds between r0 and w; every token after is above
// 1000*c1. With G < 500*(w - r0) (fewer than 500 fenced rounds per ms on
// average since the last seed) and the clock error of the re-seeding
// engine behind that of the earlier seeder by at most W (c1 - r1 >= c0 -
// r0 - W), 1000*c1 >= 1000*(c0 + w - r0) > S0 + 2G: every token after the
// wipe is larger than every token before it. (A re-seed sooner than W
// after the wipe, by a bootstrap the operator should not have run or with
// quarantine off, needs a clock that has not gone back at all.) Tokens stay
// below 2^53 (exact
// in JavaScript numbers) until the year 2255. TestWipedDeploymentIsSeededFromTheClock;
// e2e TestTokensIncreaseAcrossATotalWipe.

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

// ErrMarkerChanged says a backend's marker is not the one its repair
// expected: it was not marked.
var ErrMarkerChanged = errors.New("its deployment marker changed since it was read")

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
		if err := n.MarkNew(ctx, NewMarker(infos[i].RunID), seed); err != nil { // any lock counter a try made before it too
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
