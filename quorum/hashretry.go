package quorum

// A retried Redisson unlock whose backends disagree (hashrelease.go).

// settleRetry answers a retried release t whose first attempt left the
// owner holding somewhere (holding nodes answered "still held" from their
// latch, with the holds that attempt left there) and that gave up holds
// fresh on nodes the first attempt did not reach. A level node (as many
// holds as the latched ones had before it) is now where the first attempt
// left the others; a node behind gave up a hold the owner still has
// (helper-117: its one hold was the owner's last there) and is set back to
// the latched nodes' holds; one ahead is given up at the owner's last
// release. The answer is the latches': still held where Q nodes hold it
// (helper-118: the same unlock through two replicas at once interleaves
// so on every node), else NOQUORUM. Without a latched node that holds it,
// the holds left are not known: nothing is set, and the answer is NOQUORUM.
func (e *Engine) settleRetry(t *round, op Op, answered []int, holding int) (HashRelease, error) {
	var target int64
	for _, j := range answered {
		if rep := t.replies[j]; rep.Pre < 0 && rep.Own {
			target = max(target, rep.Holds)
		}
	}
	rerr := t.roundError(RoundRelease, ErrNoQuorum)
	if target == 0 {
		return 0, rerr
	}
	level, behind := holding, []int(nil)
	for _, j := range answered {
		switch rep := t.replies[j]; {
		case rep.Pre <= 0:
		case rep.Pre-1 >= target:
			level++
		default:
			behind = append(behind, t.idx[j])
		}
	}
	if len(behind) > 0 {
		set := Op{Kind: OpHashSetHolds, Key: op.Key, Value: op.Value, N: target, TTL: op.TTL, Aux: op.Aux, AuxTTL: op.AuxTTL, Mark: op.Mark, Mode: op.Mode}
		fix := e.start(behind, set, e.opts.NodeTimeout, false)
		fix.drain()
		level += fix.nYes
	}
	if level < e.quorum {
		rerr.Votes = level
		return 0, rerr
	}
	return StillHeld, nil
}
