package quorum

import (
	"context"
	"errors"
	"fmt"
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
	setTTLs  []time.Duration
	inflight map[string]int
	maxIn    int
	calls    map[string]int

	info    NodeInfo
	infoErr error // what health checks get
	watch   func(NodeInfo)
}

type fakeEntry struct {
	value  string // a hash lock's owner
	expiry time.Time
	holds  int // > 0: a hash lock (Redisson's layout) with this many holds
}

func newFake(name string) *fakeNode {
	return &fakeNode{name: name, data: map[string]fakeEntry{}, inflight: map[string]int{}, calls: map[string]int{},
		info: NodeInfo{RunID: "run-" + name + "-1", Uptime: time.Hour}}
}

// Info implements Node.
func (f *fakeNode) Info(ctx context.Context) (NodeInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.info, f.infoErr
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

// restart empties the node and gives it a new run_id, announced the way a
// reconnect announces it.
func (f *fakeNode) restart(persistent bool) {
	f.mu.Lock()
	f.data = map[string]fakeEntry{}
	f.info = NodeInfo{RunID: f.info.RunID + "+", Uptime: 0, Persistent: persistent}
	info, w := f.info, f.watch
	f.mu.Unlock()
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

func (f *fakeNode) callCount(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

var opNames = map[OpKind]string{OpSetNX: "setnx", OpDelIfEq: "delifeq", OpPExpireIfEq: "pexpireifeq", OpRead: "read", OpDel: "del",
	OpHashAcquire: "hashacquire", OpHashRelease: "hashrelease", OpHashExtend: "hashextend", OpHashUnhold: "hashunhold", OpRaise: "raise"}

// Do implements Node: each operation runs on its own goroutine, with the
// faults applied, and answers through done.
func (f *fakeNode) Do(op Op, deadline time.Time, done func(Reply)) {
	go func() { done(f.apply(op, deadline)) }()
}

// enter applies the faults; it returns the error the call must fail with.
func (f *fakeNode) enter(deadline time.Time, op, key string) error {
	f.mu.Lock()
	err, delay, gate := f.err, f.delay, f.gate
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
		if held {
			return Reply{}
		}
		f.mu.Lock()
		f.setTTLs = append(f.setTTLs, op.TTL)
		f.mu.Unlock()
		f.put(op.Key, op.Value, op.TTL)
		return Reply{OK: true}
	case OpDelIfEq, OpPExpireIfEq:
		if !held || v != op.Value {
			return Reply{}
		}
		f.mu.Lock()
		if op.Kind == OpDelIfEq {
			delete(f.data, op.Key)
		} else {
			f.setTTLs = append(f.setTTLs, op.TTL)
			f.data[op.Key] = fakeEntry{value: op.Value, expiry: time.Now().Add(op.TTL)}
		}
		f.mu.Unlock()
		return Reply{OK: true}
	case OpRead:
		f.mu.Lock()
		defer f.mu.Unlock()
		e, ok := f.data[op.Key]
		if !ok || time.Now().After(e.expiry) {
			return Reply{OK: true}
		}
		return Reply{OK: true, Entry: Entry{Found: true, Value: e.value, TTL: time.Until(e.expiry).Truncate(time.Millisecond)}}
	case OpDel:
		f.mu.Lock()
		delete(f.data, op.Key)
		f.mu.Unlock()
		return Reply{OK: held}
	}
	return f.applyHash(op, v, held)
}

// applyHash runs the hash lock and counter operations.
func (f *fakeNode) applyHash(op Op, owner string, held bool) Reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.data[op.Key]
	switch op.Kind {
	case OpHashAcquire:
		if held && owner != op.Value {
			return Reply{N: time.Until(e.expiry).Milliseconds()}
		}
		if !held {
			e.holds = 0
		}
		e = fakeEntry{op.Value, time.Now().Add(op.TTL), e.holds + 1}
		f.data[op.Key] = e
		var token int64
		if op.Aux != "" {
			n, _ := strconv.ParseInt(f.data[op.Aux].value, 10, 64)
			token = n + 1
			f.data[op.Aux] = fakeEntry{strconv.FormatInt(token, 10), time.Now().Add(time.Hour), 0}
		}
		return Reply{OK: true, N: int64(e.holds), Token: token}
	case OpHashRelease:
		switch {
		case !held:
			return Reply{N: -2}
		case owner != op.Value:
			return Reply{N: -1}
		case e.holds > 1:
			e.holds--
			e.expiry = time.Now().Add(op.TTL)
			f.data[op.Key] = e
			return Reply{N: 0}
		}
		delete(f.data, op.Key)
		return Reply{OK: true, N: 1}
	case OpHashUnhold:
		if !held || owner != op.Value {
			return Reply{}
		}
		if e.holds--; op.N == 0 || e.holds <= 0 {
			delete(f.data, op.Key)
			return Reply{OK: true, N: 1}
		}
		f.data[op.Key] = e
		return Reply{}
	case OpRaise:
		if n, _ := strconv.ParseInt(e.value, 10, 64); n < op.N {
			f.data[op.Key] = fakeEntry{strconv.FormatInt(op.N, 10), time.Now().Add(time.Hour), 0}
		}
		return Reply{OK: true, N: 1}
	}
	return Reply{Err: errors.New("fake: unknown op")}
}

// holds is the hold count of owner on key, 0 when it does not hold it.
func (f *fakeNode) holds(key, owner string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.data[key]
	if !ok || time.Now().After(e.expiry) || e.value != owner {
		return 0
	}
	return e.holds
}
