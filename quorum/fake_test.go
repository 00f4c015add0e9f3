package quorum

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

var errRefused = errors.New("connection refused")

// fakeNode is an in-memory node with injectable faults: an error for every
// call, a delay, or a gate that holds calls until the test opens it.
type fakeNode struct {
	name string

	mu       sync.Mutex
	data     map[string]fakeEntry
	err      error
	delay    time.Duration
	gate     chan struct{}
	opFaults map[string]opFault // by operation name (opNames): on top of err, delay, gate
	setTTLs  []time.Duration
	inflight map[string]int
	maxIn    int
	calls    map[string]int

	info     NodeInfo
	infoErr  error // what health checks get
	watch    func(NodeInfo)
	marker   string           // the run_id its deployment marker names, "" for none
	record   time.Duration    // the max-TTL record
	engines  map[string]int64 // engines' presences (EngineKey): their last check's sequence number
	counters map[string]bool
	queues   map[string]map[string]fakeWaiter // lock key -> waiter -> place
	marks    bool                             // a release with a Mark answers Noted (the lock had a lock-delay)
}

// opFault fails one kind of operation with err, or holds it until gate opens.
type opFault struct {
	err  error
	gate chan struct{}
}

type fakeEntry struct {
	value     string // a hash lock's owner
	expiry    time.Time
	holds     int    // > 0: a hash lock (Redisson's layout) with this many holds
	round     string // the round that wrote a string lock
	pad       time.Duration
	token     int64    // the fencing token noted beside a fenced string lock
	note      NoteKind // how that token was given
	tentative bool     // the token was noted by a first raise, not made final yet
}

// printLocked is OpPrint's digest of key's lock: "" when none is there.
func (f *fakeNode) printLocked(key string) string {
	e, ok := f.data[key]
	if !ok || time.Now().After(e.expiry) {
		return ""
	}
	return fmt.Sprintf("%s|%d|%s|%d", e.value, e.holds, e.round, e.expiry.UnixNano())
}

// newFake is a node of a running deployment: up an hour, marked and seeded
// as a bootstrap leaves it (unmarked: a node the engine waits the window
// for, as it may have lost locks). Nodes made together share the seed.
func newFake(name string) *fakeNode {
	f := &fakeNode{name: name, data: map[string]fakeEntry{}, inflight: map[string]int{}, calls: map[string]int{},
		info: NodeInfo{RunID: "run-" + name + "-1", Uptime: time.Hour}, counters: map[string]bool{}}
	f.marker = NewMarker(f.info.RunID)
	f.raiseLocked(TokenKey, fakeSeed)
	return f
}

// fakeSeed is the token counter bootstrap seeded every fake node with.
var fakeSeed = CounterSeed(time.Now())

// unmark takes the nodes' markers and counters away: never bootstrapped.
func unmark(fs ...*fakeNode) {
	for _, f := range fs {
		f.mu.Lock()
		f.marker, f.counters = "", map[string]bool{}
		delete(f.data, TokenKey)
		f.mu.Unlock()
	}
}

// Info implements Node.
func (f *fakeNode) Info(ctx context.Context) (NodeInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	info := f.info
	info.Intact, info.Marked, info.Marker, info.MaxTTL = f.marker != "" && MarkerRun(f.marker) == info.RunID, f.marker != "", f.marker, f.record
	return info, f.infoErr
}

// Record implements Node.
func (f *fakeNode) Record(ctx context.Context, ttl time.Duration, engine string, seq int64) (time.Duration, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.infoErr != nil {
		return 0, 0, f.infoErr
	}
	f.record = max(f.record, ttl)
	prev := f.engines[engine]
	if f.engines == nil {
		f.engines = map[string]int64{}
	}
	f.engines[engine] = seq
	return f.record, prev, nil
}

// Counters implements Node.
func (f *fakeNode) Counters(ctx context.Context) (map[string]int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	out := map[string]int64{}
	for k := range f.counters {
		out[k], _ = strconv.ParseInt(f.data[k].value, 10, 64)
	}
	return out, nil
}

// Repair implements Node.
func (f *fakeNode) Repair(ctx context.Context, marker, expect string, counters map[string]int64, floor int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	for k, v := range counters {
		f.raiseLocked(k, v)
	}
	f.floorLocked(floor) // before the marker checks, as repair.lua raises
	switch {
	case f.marker != "" && MarkerRun(f.marker) == MarkerRun(marker):
	case f.marker != expect:
		return ErrMarkerChanged
	default:
		f.marker = marker
	}
	return nil
}

// floorLocked raises TokenKey and every lock counter the node lists to at
// least floor (0: none), as repair.lua and marknew.lua do.
func (f *fakeNode) floorLocked(floor int64) {
	if floor <= 0 {
		return
	}
	f.raiseLocked(TokenKey, floor)
	for k := range f.counters {
		if engineCounter(k) {
			f.raiseLocked(k, floor)
		}
	}
}

func (f *fakeNode) raiseLocked(key string, n int64) {
	if cur, _ := strconv.ParseInt(f.data[key].value, 10, 64); cur < n {
		f.data[key] = fakeEntry{value: strconv.FormatInt(n, 10), expiry: time.Now().Add(time.Hour)}
	}
	f.counters[key] = true
}

// counter is the value of a counter key on the node.
func (f *fakeNode) counter(key string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, _ := strconv.ParseInt(f.data[key].value, 10, 64)
	return n
}

// Keys implements Node.
func (f *fakeNode) Keys(ctx context.Context, prefix string, limit int) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keys []string
	for k, e := range f.data {
		if strings.HasPrefix(k, prefix) && time.Now().Before(e.expiry) && len(keys) < limit {
			keys = append(keys, k)
		}
	}
	return keys, f.infoErr
}

// Watch implements Node.
func (f *fakeNode) Watch(w func(NodeInfo)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watch = w
}

// restart starts a new run of the backend (a new run_id, announced the way
// a reconnect announces it): empty, or with persistent (appendfsync always)
// everything it held.
func (f *fakeNode) restart(persistent bool) {
	f.mu.Lock()
	if !persistent {
		f.data, f.counters, f.marker, f.record, f.engines = map[string]fakeEntry{}, map[string]bool{}, "", 0, nil
	}
	f.info = NodeInfo{RunID: f.info.RunID + "+", Uptime: 0, Persistent: persistent}
	w := f.watch
	f.mu.Unlock()
	info, _ := f.Info(context.Background())
	w(info)
}

func fakes(n int) ([]*fakeNode, []Node) {
	fs := make([]*fakeNode, n)
	ns := make([]Node, n)
	for i := range fs {
		fs[i] = newFake(fmt.Sprintf("node%d", i))
		ns[i] = fs[i]
	}
	return fs, ns
}

func (f *fakeNode) Addr() string { return f.name }
func (f *fakeNode) Close() error { return nil }

func (f *fakeNode) put(key, value string, ttl time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data[key] = fakeEntry{value: value, expiry: time.Now().Add(ttl)}
}

func (f *fakeNode) get(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.data[key]
	if !ok || time.Now().After(e.expiry) {
		return "", false
	}
	return e.value, true
}

func (f *fakeNode) setFault(err error, delay time.Duration, gate chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err, f.delay, f.gate = err, delay, gate
}

// setOpFault fails (err) or holds (gate) every later operation named op.
func (f *fakeNode) setOpFault(op string, err error, gate chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opFaults == nil {
		f.opFaults = map[string]opFault{}
	}
	f.opFaults[op] = opFault{err: err, gate: gate}
}

func (f *fakeNode) callCount(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

var opNames = map[OpKind]string{OpSetNX: "setnx", OpDelIfEq: "delifeq", OpPExpireIfEq: "pexpireifeq", OpRead: "read", OpDel: "del", OpPrint: "print",
	OpHashAcquire: "hashacquire", OpHashRelease: "hashrelease", OpHashExtend: "hashextend", OpHashUnhold: "hashunhold", OpRaise: "raise", OpFixToken: "fixtoken",
	OpUndo: "undo", OpSetXX: "setxx", OpHashSetHolds: "hashsetholds", OpHashGet: "hashget", OpRenew: "renew", OpReattach: "reattach", OpHashLease: "hashlease",
	OpQueueTail: "queuetail", OpEnqueue: "enqueue", OpQueueBeat: "queuebeat", OpDequeue: "dequeue", OpUnmark: "unmark", OpDelLatch: "dellatch"}

// Do implements Node: each operation runs on its own goroutine, with the
// faults applied, and answers through done.
func (f *fakeNode) Do(op Op, deadline time.Time, done Done) {
	go func() { done.Done(f.apply(op, deadline)) }()
}

// enter applies the faults; it returns the error the call must fail with.
func (f *fakeNode) enter(deadline time.Time, op, key string) error {
	f.mu.Lock()
	err, delay, gate := f.err, f.delay, f.gate
	if of, ok := f.opFaults[op]; ok {
		err = cmp.Or(err, of.err)
		if gate == nil {
			gate = of.gate
		}
	}
	f.calls[op]++
	f.inflight[key]++
	f.maxIn = max(f.maxIn, f.inflight[key])
	f.mu.Unlock()
	if err != nil {
		return err
	}
	timeout := time.NewTimer(time.Until(deadline))
	defer timeout.Stop()
	if gate != nil {
		select {
		case <-gate:
		case <-timeout.C:
			return context.DeadlineExceeded
		}
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-timeout.C:
			return context.DeadlineExceeded
		}
	}
	return nil
}

func (f *fakeNode) apply(op Op, deadline time.Time) Reply {
	defer func() {
		f.mu.Lock()
		f.inflight[op.Key]--
		f.mu.Unlock()
	}()
	if err := f.enter(deadline, opNames[op.Kind], op.Key); err != nil {
		return Reply{Err: err}
	}
	v, held := f.get(op.Key)
	switch op.Kind {
	case OpSetNX:
		if r, refused := f.fairRefusal(op); refused {
			return r
		}
		if held {
			return Reply{}
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.setTTLs = append(f.setTTLs, op.TTL)
		var token int64
		note := NoteNone
		if op.Aux != "" {
			token, note = f.incrLocked(op.Aux, op.Round), NoteFenced
		}
		// a fenced lock notes its counter tentative (acquire.lua)
		f.data[op.Key] = fakeEntry{value: op.Value, expiry: time.Now().Add(op.TTL), round: op.Round, pad: op.Pad, note: note, token: token, tentative: token != 0}
		return Reply{OK: true, Token: token}
	case OpUndo:
		f.mu.Lock()
		defer f.mu.Unlock()
		if !held || v != op.Value || f.data[op.Key].round != op.Round {
			return Reply{}
		}
		if f.pinned(op.Key, op.Value) {
			f.unmark(op.Key)
			return Reply{}
		}
		delete(f.data, op.Key)
		return Reply{OK: true}
	case OpDelIfEq:
		if !held || v != op.Value {
			return Reply{}
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if op.Round != "" && (f.data[op.Key].round != op.Round || f.pinned(op.Key, op.Value)) {
			if f.data[op.Key].round == op.Round {
				f.unmark(op.Key)
			}
			return Reply{}
		}
		delete(f.data, op.Key)
		delete(f.data, PinKey(op.Key))
		marked := f.marks && op.Mark != ""
		if op.Fair {
			q := f.queueLocked(op.Key)
			delete(q, op.Value)
			if len(q) > 0 {
				return Reply{OK: true, N: 2, Noted: marked}
			}
		}
		return Reply{OK: true, Noted: marked}
	case OpQueueTail, OpEnqueue, OpQueueBeat, OpDequeue:
		return f.applyQueue(op)
	case OpUnmark: // marks are not kept: only counted (calls)
		return Reply{OK: f.marks}
	case OpPExpireIfEq:
		return Reply{OK: f.extend(Lease{Key: op.Key, Value: op.Value, TTL: op.TTL, Pad: op.Pad, Round: op.Round}, op.N == 1, false)}
	case OpReattach:
		return Reply{OK: f.reattach(op)}
	case OpRenew:
		each := make([]bool, len(*op.Leases))
		for i, l := range *op.Leases {
			each[i] = f.extend(l, false, true)
		}
		return Reply{OK: true, Each: &each}
	case OpRead:
		f.mu.Lock()
		defer f.mu.Unlock()
		e, ok := f.data[op.Key]
		if !ok || time.Now().After(e.expiry) {
			return Reply{OK: true}
		}
		entry := Entry{Found: true, Value: e.value, TTL: time.Until(e.expiry).Truncate(time.Millisecond)}
		if op.Aux != "" {
			entry.Token, entry.Round, entry.Note = e.token, e.round, e.note
			entry.Tentative = e.tentative // counts only beside the same token final
		}
		return Reply{OK: true, Entry: entry}
	case OpPrint:
		f.mu.Lock()
		defer f.mu.Unlock()
		return Reply{OK: true, Entry: Entry{Found: held, Value: f.printLocked(op.Key)}}
	case OpDelLatch:
		f.mu.Lock()
		defer f.mu.Unlock()
		e, ok := f.data[op.Key]
		switch {
		case !ok || time.Now().After(e.expiry):
			return Reply{}
		case e.holds > 0 || e.round != "" || f.counters[op.Key] || !slices.Contains([]string{"-2", "-1", "0", "1"}, e.value):
			return Reply{N: -1}
		}
		delete(f.data, op.Key)
		return Reply{OK: true, N: 1}
	case OpDel:
		f.mu.Lock()
		defer f.mu.Unlock()
		if p := f.printLocked(op.Key); p != "" && !slices.Contains(strings.Fields(op.Value), p) {
			return Reply{N: -1} // another lock is there now
		}
		delete(f.data, op.Key)
		delete(f.data, PinKey(op.Key))
		return Reply{OK: held}
	}
	return f.applyHash(op, v, held)
}
