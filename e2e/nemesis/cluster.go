package main

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"
)

// cluster is the system under test: backends, the links, the replicas.
type cluster struct {
	backends []*backend
	links    *links
	replicas []*replica
	skew     bool          // skewclock.so runs this redis-server at a clock rate
	delay    time.Duration // native_lock_delay, 0 if the binary has no such setting
	libDelay time.Duration // lock_delay (SET NX PX and Redisson's locks), 0 if the binary has no such setting
	logf     func(format string, args ...any)
}

func startCluster(dir, bin string, nBackends, nReplicas int, logf func(string, ...any)) (*cluster, error) {
	c := &cluster{logf: logf}
	if err := buildSkewClock(dir); err != nil {
		logf("note: %s faults skipped: %v", ClockSkew, err)
	} else {
		c.skew = true
	}
	for i := range nBackends {
		bdir := fmt.Sprintf("%s/backend%d", dir, i)
		if err := os.MkdirAll(bdir, 0o755); err != nil {
			return nil, err
		}
		b, err := newBackend(bdir)
		if err != nil {
			c.stop()
			return nil, err
		}
		c.backends = append(c.backends, b)
	}
	var err error
	if c.links, err = newLinks(nReplicas, c.backends); err != nil {
		c.stop()
		return nil, err
	}
	old := usesOldBootstrap(bin)
	if old {
		logf("note: %s predates the bootstrap subcommand: replicas start with -initial-cluster-state new", bin)
	} else {
		var addrs []string
		for _, b := range c.backends {
			addrs = append(addrs, b.addr)
		}
		if err := bootstrap(bin, addrs); err != nil {
			// A loaded machine can take longer than the quarantine window
			// to get here; the backends then count once it has passed.
			logf("note: %v; waiting out the quarantine window instead", err)
			time.Sleep(quarantine + time.Second)
		}
	}
	settings := proxySettings(bin, old)
	if slices.Contains(settings, "-native-lock-delay") {
		c.delay = nativeLockDelay
	}
	if slices.Contains(settings, "-lock-delay") {
		c.libDelay = lockDelay
	}
	for r := range nReplicas {
		rep, err := newReplica(bin, dir, r, c.links.addrs(r), old)
		if err != nil {
			c.stop()
			return nil, err
		}
		c.replicas = append(c.replicas, rep)
	}
	return c, nil
}

// stop ends every process and link the cluster started.
func (c *cluster) stop() {
	for _, r := range c.replicas {
		r.kill()
	}
	if c.links != nil {
		c.links.stop()
	}
	for _, b := range c.backends {
		b.kill()
	}
}

// inject runs the schedule from start until every fault has ended; each
// fault runs in its own goroutine at its planned time.
func (c *cluster) inject(start time.Time, faults []*fault, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for _, f := range faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(time.Until(start.Add(f.At))):
			case <-stop:
				f.Note = "not run: the run stopped"
				return
			}
			f.Began = time.Since(start)
			c.apply(f)
			f.Ended = time.Since(start)
		}()
	}
	wg.Wait()
}

func (c *cluster) apply(f *fault) {
	fail := func(err error) {
		if err != nil {
			f.Note = "error: " + err.Error()
			c.logf("fault %s: %v", f.Kind, err)
		}
	}
	switch f.Kind {
	case BackendPause:
		b := c.backends[f.Backend]
		b.signal(syscall.SIGSTOP)
		time.Sleep(f.Dur)
		b.signal(syscall.SIGCONT)
	case BackendRestart:
		b := c.backends[f.Backend]
		b.kill()
		time.Sleep(f.Dur)
		fail(b.restart(""))
	case ClockSkew:
		if !c.skew {
			f.Note = "skipped: skewclock.so does not run redis-server here"
			return
		}
		b := c.backends[f.Backend]
		b.kill()
		time.Sleep(f.Dur)
		fail(b.restart(f.Rate))
	case LinkStall:
		fail(c.links.stall(f.Replica, f.Backend))
		time.Sleep(f.Dur)
		c.links.heal(f.Replica, f.Backend)
	case LinkDrop:
		fail(c.links.drop(f.Replica, f.Backend))
		time.Sleep(f.Dur)
		c.links.heal(f.Replica, f.Backend)
	case ReplicaPause:
		r := c.replicas[f.Replica]
		r.signal(syscall.SIGSTOP)
		time.Sleep(f.Dur)
		r.signal(syscall.SIGCONT)
	case ReplicaRestart:
		r := c.replicas[f.Replica]
		r.kill()
		time.Sleep(f.Dur)
		fail(r.restart())
	}
}
