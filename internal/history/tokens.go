package history

// tokens: one lock has one token (every token its holder read, and the one
// its grant answered, are equal), and a lock granted after another (sent
// after the other's grant returned, its token fixed after the other's was)
// has a larger token. Holds of one owner are not compared: a re-acquire
// with an Unknown outcome may not have taken effect, and its owner's later
// reads then still read the first lock's token.
func (k *keyHistory) tokens() []Anomaly {
	var out []Anomaly
	for _, h := range k.holds {
		for _, i := range h.ops {
			op := k.ops[i]
			if op.Kind != Token || op.Outcome != OK {
				continue
			}
			switch {
			case h.token == 0:
				h.token, h.tokenOp = op.Token, i
			case op.Token != h.token:
				out = append(out, k.anomaly("two-tokens", []int{h.grant, h.tokenOp, i}, "%s's lock granted at %s answered token %d, then %d",
					h.owner, d(k.ops[h.grant].Return), h.token, op.Token))
			}
		}
	}
	for _, b := range k.holds {
		if b.token == 0 {
			continue
		}
		gb, fb := k.ops[b.grant], k.ops[b.tokenOp]
		worst := -1 // the earlier lock with the largest token not below b's
		for n, a := range k.holds {
			if a.owner == b.owner || a.token == 0 || a.token < b.token {
				continue
			}
			ga, fa := k.ops[a.grant], k.ops[a.tokenOp]
			if ga.Return < gb.Invoke && fa.Return < fb.Invoke && (worst < 0 || a.token > k.holds[worst].token) {
				worst = n
			}
		}
		if worst >= 0 {
			a := k.holds[worst]
			out = append(out, k.anomaly("token-backwards", []int{a.grant, a.tokenOp, b.grant, b.tokenOp},
				"%s's lock granted at %s has token %d, not above %d of %s's lock granted earlier at %s",
				b.owner, d(gb.Return), b.token, a.token, a.owner, d(k.ops[a.grant].Return)))
		}
	}
	return out
}

// answers: release, extend and token answers that agree with who held the
// key. An OK to an owner while another owner's window covered the whole
// request, an OK to an owner that never asked for the lock, an extend or
// token read answered OK after the owner was told its release succeeded,
// and a refusal (not held) to an owner whose own window covered the whole
// request are each an anomaly.
func (k *keyHistory) answers() []Anomaly {
	var out []Anomaly
	for _, i := range k.idx {
		op := k.ops[i]
		if op.Kind == Acquire {
			continue
		}
		h := k.holdOf(i)
		switch op.Outcome {
		case OK:
			if n := k.coveredBy(op.Owner, op.Invoke, op.Return); n >= 0 && !k.bothShared(h, n) {
				w := k.windows[n]
				out = append(out, k.anomaly(string(op.Kind)+"-not-owner", []int{w.op, i}, "%s by %s answered OK at %s while %s held it (%s to %s)",
					op.Kind, op.Owner, d(op.Return), k.holds[w.hold].owner, d(w.start), endString(w.end)))
			} else if h == nil {
				out = append(out, k.anomaly(string(op.Kind)+"-never-granted", []int{i}, "%s by %s answered OK at %s: it never asked for the lock",
					op.Kind, op.Owner, d(op.Return)))
			} else if op.Kind != Release && k.releasedBefore(h, op.Invoke) {
				out = append(out, k.anomaly(string(op.Kind)+"-after-release", []int{h.grant, i}, "%s by %s answered OK at %s after its release succeeded",
					op.Kind, op.Owner, d(op.Return)))
			}
		case NotHeld:
			if h == nil {
				continue
			}
			for _, w := range h.windows {
				if w.start <= op.Invoke && op.Return < w.end { // at its end it may already be gone
					out = append(out, k.anomaly(string(op.Kind)+"-refused-holder", []int{w.op, i}, "%s by %s answered not held at %s inside its window (%s to %s)",
						op.Kind, op.Owner, d(op.Return), d(w.start), endString(w.end)))
					break
				}
			}
		}
	}
	return out
}

// bothShared reports whether hold h and window n's hold are both a
// read-write lock's readers (which share it).
func (k *keyHistory) bothShared(h *hold, n int) bool {
	return h != nil && k.ops[h.grant].Shared && k.ops[k.holds[k.windows[n].hold].grant].Shared
}

// holdOf is the hold op i belongs to, or nil.
func (k *keyHistory) holdOf(i int) *hold { return k.holdByOp[i] }
