package history

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// simLock is a lock that keeps the contract, driven one op at a time in the
// order the ops take effect: legal histories by construction, with Unknown
// outcomes (some took effect, some did not) and timings at the edges.
type simLock struct {
	holder   string
	expiry   time.Duration
	delay    time.Duration // owed if the lock expires unreleased
	token    int64
	lastUsed map[string]time.Duration // each owner's last Return
}

// simulate builds n ops over keys with clients that each hold one value at a
// time.
func simulate(rng *rand.Rand, n, keys, clients int) []Op {
	locks := make([]*simLock, keys)
	for i := range locks {
		locks[i] = &simLock{lastUsed: map[string]time.Duration{}}
	}
	values := make([]string, clients)
	seq := make([]int, clients)
	var now time.Duration
	var ops []Op
	for range n {
		c, k := rng.IntN(clients), rng.IntN(keys)
		l := locks[k]
		if values[c] == "" || rng.IntN(4) == 0 {
			seq[c]++
			values[c] = fmt.Sprintf("c%d-%d", c, seq[c])
		}
		owner := values[c]
		now += time.Duration(rng.IntN(30)) * ms
		inv := max(now-time.Duration(rng.IntN(40))*ms, l.lastUsed[owner]+ms)
		now = max(now, inv)
		ret := now + time.Duration(rng.IntN(40))*ms
		l.lastUsed[owner] = ret
		op := Op{Client: fmt.Sprint("c", c), Key: fmt.Sprint("k", k), Owner: owner, Invoke: inv, Return: ret}
		held := l.holder != "" && now < l.expiry
		free := l.holder == "" || now >= l.expiry+l.delay
		effect := rng.IntN(8) != 0 // else the request never took effect (Unknown)
		switch rng.IntN(4) {
		case 0, 1:
			op.Kind, op.TTL = Acquire, time.Duration(20+rng.IntN(200))*ms
			if rng.IntN(3) == 0 {
				op.Delay = time.Duration(rng.IntN(100)) * ms
			}
			switch {
			case !effect:
				op.Outcome = Unknown
			case free:
				l.token++
				l.holder, l.expiry, l.delay = owner, now+op.TTL, op.Delay
				op.Outcome, op.Token = OK, l.token
				if ret >= inv+op.TTL || rng.IntN(8) == 0 {
					op.Outcome, op.Token = Unknown, 0 // too late, or the reply was lost
				}
			default:
				op.Outcome = Taken
			}
		case 2:
			op.Kind = Release
			if rng.IntN(2) == 0 {
				op.Kind, op.TTL = Extend, time.Duration(20+rng.IntN(200))*ms
			}
			switch {
			case !effect:
				op.Outcome = Unknown
			case held && l.holder == owner:
				if op.Kind == Release {
					l.holder = ""
				} else {
					l.expiry = now + op.TTL
				}
				op.Outcome = OK
			default:
				op.Outcome = NotHeld
			}
			if effect && rng.IntN(8) == 0 {
				op.Outcome = Unknown
			}
		default:
			op.Kind = Token
			switch {
			case !effect:
				op.Outcome = Unknown
			case held && l.holder == owner:
				op.Outcome, op.Token = OK, l.token
			default:
				op.Outcome = NotHeld
			}
		}
		ops = append(ops, op)
	}
	rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] }) // completion order is not invoke order
	return ops
}
