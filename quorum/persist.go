package quorum

import "time"

// resend says how persist sends an operation again: at most tries times in
// all (0: no limit), each send ending before until; a node wait apart, or
// with grow, twice as long each time, at most 4 node waits.
type resend struct {
	tries int
	until time.Time
	grow  bool
}

// persist waits in the background for the answers to op, sent to the nodes
// idx names (ch: their answers), and sends it again to the nodes that
// failed or did not answer, as r says, or until the engine closes; when it
// stops it calls each of then. op must be harmless to repeat. A node known down
// answers at once (send), so a node that stays down costs one timer per
// pass, never a backlog.
func (e *Engine) persist(idx []int, op Op, ch <-chan answer, r resend, then ...func()) {
	wait := e.opts.NodeTimeout
	gap := wait
	done := func() {
		for _, f := range then {
			f()
		}
	}
	started := e.monitors.Go(func() {
		defer done()
		for try := 1; ; try++ {
			timer := time.NewTimer(wait + e.lateGrace())
			answered := make([]bool, len(idx))
		collect:
			for range idx {
				select {
				case a := <-ch:
					answered[a.node] = a.reply.Err == nil
				case <-timer.C:
					break collect
				case <-e.life.Done():
					timer.Stop()
					return
				}
			}
			timer.Stop()
			var again []int
			for j, ok := range answered {
				if !ok {
					again = append(again, idx[j])
				}
			}
			if idx = again; len(idx) == 0 || try == r.tries || !time.Now().Add(gap+wait).Before(r.until) {
				return
			}
			select {
			case <-e.life.Done():
				return
			case <-time.After(gap):
			}
			if r.grow {
				gap = min(2*gap, 4*wait)
			}
			ch = e.send(idx, op, time.Now().Add(wait))
		}
	})
	if !started {
		done() // the engine closed: nothing is retried
	}
}
