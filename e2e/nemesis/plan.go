package main

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// The kinds of fault the nemesis injects.
const (
	BackendPause   = "backend-pause"   // SIGSTOP a redis-server, SIGCONT after Dur
	BackendRestart = "backend-restart" // kill -9, restart empty on the same port after Dur
	LinkStall      = "link-stall"      // one replica's link to one backend passes nothing for Dur
	LinkDrop       = "link-drop"       // one replica's link to one backend resets every connection for Dur
	ReplicaPause   = "replica-pause"   // SIGSTOP a proxy replica, SIGCONT after Dur
	ReplicaRestart = "replica-restart" // kill -9 a proxy replica, start it again after Dur
	ClockSkew      = "clock-skew"      // restart a backend empty with its clocks at rate Rate (skewclock.c)
)

var allKinds = []string{BackendPause, BackendRestart, LinkStall, LinkDrop, ReplicaPause, ReplicaRestart, ClockSkew}

// fault is one planned fault; Began and Ended are filled in as it runs.
type fault struct {
	At      time.Duration `json:"at"`
	Kind    string        `json:"kind"`
	Replica int           `json:"replica"`
	Backend int           `json:"backend"`
	Dur     time.Duration `json:"dur"`
	Rate    string        `json:"rate,omitempty"`
	Began   time.Duration `json:"began"`
	Ended   time.Duration `json:"ended"`
	Note    string        `json:"note,omitempty"`
}

func (f *fault) String() string {
	target := fmt.Sprintf("backend %d", f.Backend)
	switch f.Kind {
	case LinkStall, LinkDrop:
		target = fmt.Sprintf("replica %d -> backend %d", f.Replica, f.Backend)
	case ReplicaPause, ReplicaRestart:
		target = fmt.Sprintf("replica %d", f.Replica)
	}
	s := fmt.Sprintf("%8.3fs..%8.3fs %-15s %-24s for %v", f.Began.Seconds(), f.Ended.Seconds(), f.Kind, target, f.Dur.Round(time.Millisecond))
	if f.Rate != "" {
		s += " rate x" + f.Rate
	}
	if f.Note != "" {
		s += " (" + f.Note + ")"
	}
	return s
}

type span struct{ from, to time.Duration }

// planner places faults so that at most a minority of backends and all but
// one replica are impaired at any moment (a restarted backend counts until
// its quarantine, max_ttl, is over): the proxy must stay safe under any of
// these, and live under these bounds, so clients keep making progress.
type planner struct {
	rng      *rand.Rand
	backends [][]span
	replicas [][]span
	quar     time.Duration
}

func (p *planner) busy(spans [][]span, at span) (free []int, used int) {
	for i, ss := range spans {
		clash := false
		for _, s := range ss {
			if s.from < at.to && at.from < s.to {
				clash = true
			}
		}
		if clash {
			used++
		} else {
			free = append(free, i)
		}
	}
	return free, used
}

// plan draws a schedule for a run of length total from rng: the first
// faults are one of each of kinds (in a random order), then kinds at random.
func plan(rng *rand.Rand, kinds []string, total time.Duration, nBackends, nReplicas int, quarantine time.Duration) []*fault {
	p := &planner{rng: rng, backends: make([][]span, nBackends), replicas: make([][]span, nReplicas), quar: quarantine}
	order := append([]string(nil), kinds...)
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var out []*fault
	end := total - 6*time.Second
	for t := time.Second; t < end; {
		kind := kinds[rng.IntN(len(kinds))]
		if len(out) < len(order) {
			kind = order[len(out)]
		}
		f := p.place(kind, t, end)
		if f == nil {
			t += 500 * time.Millisecond
			continue
		}
		out = append(out, f)
		t += time.Duration(300+rng.IntN(2200)) * time.Millisecond
	}
	return out
}

func (p *planner) ms(lo, hi int) time.Duration {
	return time.Duration(lo+p.rng.IntN(hi-lo)) * time.Millisecond
}

func (p *planner) place(kind string, t, end time.Duration) *fault {
	f := &fault{At: t, Kind: kind}
	var hold time.Duration // how long the target counts as impaired
	switch kind {
	case BackendPause:
		f.Dur = p.ms(100, 3000)
		hold = f.Dur
	case BackendRestart, ClockSkew:
		f.Dur = p.ms(0, 1500)
		hold = f.Dur + p.quar + time.Second
		if kind == ClockSkew { // within drift_factor (0.01): the padding covers a clock up to ~1.0101 fast
			f.Rate = []string{"1.008", "1.005", "0.995", "0.992"}[p.rng.IntN(4)]
		}
	case LinkStall, LinkDrop:
		f.Dur = p.ms(100, 3000)
		hold = f.Dur
	case ReplicaPause:
		f.Dur = p.ms(100, 5000)
		hold = f.Dur
	case ReplicaRestart:
		f.Dur = p.ms(0, 1500)
		hold = f.Dur + 2*time.Second
	}
	if t+hold > end+6*time.Second {
		return nil
	}
	at := span{t, t + hold}
	switch kind {
	case ReplicaPause, ReplicaRestart:
		free, used := p.busy(p.replicas, at)
		if len(free) == 0 || used+1 > len(p.replicas)-1 {
			return nil
		}
		f.Replica = free[p.rng.IntN(len(free))]
		p.replicas[f.Replica] = append(p.replicas[f.Replica], at)
	default:
		free, used := p.busy(p.backends, at)
		if len(free) == 0 || used+1 > (len(p.backends)-1)/2 {
			return nil
		}
		f.Backend = free[p.rng.IntN(len(free))]
		p.backends[f.Backend] = append(p.backends[f.Backend], at)
		if kind == LinkStall || kind == LinkDrop {
			f.Replica = p.rng.IntN(len(p.replicas))
		}
	}
	return f
}
