package e2e

import (
	"crypto/rand"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// Redisson's RPermitExpirableSemaphore scripts (3.23, 3.52), from its
// recorded sessions.
const (
	permAcquireSHA   = "992c96b09a3d8ea0b37f5dc12e5347a44d93909d"
	permReleaseSHA   = "4ce079451bee2993ce00c8a4e205b536c6ccad67"
	permAvailableSHA = "26b3972b2c9e617556282f404cb79709d746a713"
	permAcquiredSHA  = "6f0b0be79a0c146c778cb14f40c10eb5b706e574"
	permTotalSHA     = "e242db5c1c68811b0d26a41937dcf22415b6d872"
	permTrySetSHA    = "241ce4e87e652b4f9b39d33cbcd7df9ee8ed906c"
	permSetSHA       = "494d8561fee0cdb033f6c28d74c052c52189a578"
	permAddSHA       = "ec6fb1cd5f66817424e8fe70fee7929391b7c6f0"
	redissonNoLease  = 922337203685477
)

// permitClient sends one client's RPermitExpirableSemaphore calls as the
// scripts lay out their keys and arguments.
type permitClient struct {
	c    *redis.Client
	name string
}

func (p permitClient) channel() string { return redissonName("redisson_sc", p.name) }

// ntc and nct are the two orders the scripts name their keys in.
func (p permitClient) ntc() []string {
	return []string{p.name, strings.TrimPrefix(redissonName("", p.name), ":") + ":timeout", p.channel()}
}

func (p permitClient) nct() []string {
	k := p.ntc()
	return []string{k[0], k[2], k[1]}
}

// newPermitID is a permit id as Redisson makes one: 16 random bytes.
func newPermitID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return string(b)
}

// acquire asks for one permit for id with a lease (leaseMS 0: none): "OK",
// ":<when to try again>", or "" (nil: wait for a release).
func (p permitClient) acquire(t testing.TB, id string, leaseMS int64) (string, error) {
	now := time.Now().UnixMilli()
	end := int64(redissonNoLease)
	if leaseMS > 0 {
		end = now + leaseMS
	}
	v, err := p.c.Eval(t.Context(), clientScript(t, permAcquireSHA), p.ntc(), 1, end, now, redissonNoLease, "PUBLISH", id).Text()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return v, err
}

// release gives id's permit back: 1, or 0 when it was not held.
func (p permitClient) release(t testing.TB, id string) (int64, error) {
	return p.c.Eval(t.Context(), clientScript(t, permReleaseSHA), p.nct(), id, 1, time.Now().UnixMilli(), "PUBLISH").Int64()
}

// read runs one of the reads (availablePermits, acquiredPermits, getPermits).
func (p permitClient) read(t testing.TB, sha string) (int64, error) {
	return p.c.Eval(t.Context(), clientScript(t, sha), p.ntc(), time.Now().UnixMilli(), "PUBLISH").Int64()
}

// trySet is trySetPermits(n): 1 when set.
func (p permitClient) trySet(t testing.TB, n int) (int64, error) {
	return p.c.Eval(t.Context(), clientScript(t, permTrySetSHA), []string{p.name, p.channel()}, n, "PUBLISH").Int64()
}

func newPermitClients(t *testing.T, name string) (*harness.Harness, [2]permitClient) {
	h := harness.New(t, 5, nil)
	_, second := h.Serve()
	return h, [2]permitClient{{h.Client(), name}, {h.Client(func(o *redis.Options) { o.Addr = second }), name}}
}

// TestPermitWithoutLeaseRefused: a permit without a lease (Redisson's
// acquire() and tryAcquire() without one) would never lapse, and a backend
// that restarted empty would forget it while its holder counted on it: it
// is refused, naming the lease, and nothing is held after.
func TestPermitWithoutLeaseRefused(t *testing.T) {
	_, ps := newPermitClients(t, "sem:nolease")
	if v, err := ps[0].trySet(t, 2); v != 1 || err != nil {
		t.Fatalf("trySetPermits(2) = %v, %v", v, err)
	}
	_, err := ps[0].acquire(t, newPermitID(), 0)
	if err == nil || !strings.Contains(err.Error(), "lease") {
		t.Fatalf("a permit without a lease: %v; want refused, naming the lease", err)
	}
	if n, err := ps[1].read(t, permAcquiredSHA); n != 0 || err != nil {
		t.Errorf("acquiredPermits after the refusal = %v, %v; want 0", n, err)
	}
	if v, err := ps[1].acquire(t, newPermitID(), 5000); v != "OK" || err != nil {
		t.Errorf("a permit with a lease through the other replica = %q, %v; want OK", v, err)
	}
}

// TestPermitRetryAtLapse: with the only permit held under a short lease,
// a refused acquire is told when to try again (on the client's clock), no
// earlier than the lease's end; a try then gets the permit, or is told
// again (the backends' copies lapse a few ms apart, more under load), and
// one of three tries gets it.
func TestPermitRetryAtLapse(t *testing.T) {
	_, ps := newPermitClients(t, "sem:lapse")
	if v, err := ps[0].trySet(t, 1); v != 1 || err != nil {
		t.Fatalf("trySetPermits(1) = %v, %v", v, err)
	}
	sent := time.Now()
	if v, err := ps[0].acquire(t, newPermitID(), 800); v != "OK" || err != nil {
		t.Fatalf("the first permit = %q, %v", v, err)
	}
	b := newPermitID()
	v, err := ps[1].acquire(t, b, 5000)
	if err != nil || !strings.HasPrefix(v, ":") {
		t.Fatalf("a second permit while the only one is held = %q, %v; want :<when to try again>", v, err)
	}
	for try := 1; ; try++ {
		at, _ := strconv.ParseInt(v[1:], 10, 64)
		if end := sent.Add(800 * time.Millisecond).UnixMilli(); at < end {
			t.Fatalf("told to try again at %d, before the lease ends (%d)", at, end)
		}
		time.Sleep(time.Until(time.UnixMilli(at)))
		if v, err = ps[1].acquire(t, b, 5000); v == "OK" && err == nil {
			t.Logf("granted at try %d, %v after the lease ended", try, time.Since(sent.Add(800*time.Millisecond)).Round(time.Millisecond))
			return
		}
		if try == 3 || err != nil || !strings.HasPrefix(v, ":") {
			t.Fatalf("try %d at the time it was told = %q, %v; want OK", try, v, err)
		}
	}
}

// TestPermitReleaseWakesWaiters: a release through one replica tells the
// waiters subscribed through the other, with the permits now free.
func TestPermitReleaseWakesWaiters(t *testing.T) {
	_, ps := newPermitClients(t, "sem:wake")
	if v, err := ps[0].trySet(t, 1); v != 1 || err != nil {
		t.Fatalf("trySetPermits(1) = %v, %v", v, err)
	}
	id := newPermitID()
	if v, err := ps[0].acquire(t, id, 20000); v != "OK" || err != nil {
		t.Fatalf("the permit = %q, %v", v, err)
	}
	sub := ps[1].c.Subscribe(t.Context(), ps[1].channel())
	defer sub.Close()
	if _, err := sub.Receive(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, err := ps[1].acquire(t, newPermitID(), 20000); !strings.HasPrefix(v, ":") || err != nil {
		t.Fatalf("a second permit while the only one is held = %q, %v; want :<when it lapses>", v, err)
	}
	released := time.Now()
	if n, err := ps[0].release(t, id); n != 1 || err != nil {
		t.Fatalf("release = %v, %v", n, err)
	}
	select {
	case m := <-sub.Channel():
		if m.Payload != "1" {
			t.Errorf("the waiters were told %q; want 1 (the permits free)", m.Payload)
		}
		t.Logf("woken %v after the release", time.Since(released).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up within 5 s of the release")
	}
	if n, err := ps[0].release(t, id); n != 0 || err != nil {
		t.Errorf("a second release of the id = %v, %v; want 0", n, err)
	}
}

// TestPermitsBadCalls: a channel that is not the semaphore's, or an
// acquire whose count disagrees with its ids, gets a clean error.
func TestPermitsBadCalls(t *testing.T) {
	_, ps := newPermitClients(t, "sem:bad")
	p := ps[0]
	now := time.Now().UnixMilli()
	keys := p.ntc()
	keys[2] = "redisson_sc:{other}"
	err := p.c.Eval(t.Context(), clientScript(t, permAcquireSHA), keys, 1, now+1000, now, redissonNoLease, "PUBLISH", "id").Err()
	if err == nil || !strings.Contains(err.Error(), "redisson_sc:{sem:bad}") {
		t.Errorf("another semaphore's channel: %v; want refused, naming the semaphore's", err)
	}
	err = p.c.Eval(t.Context(), clientScript(t, permAcquireSHA), p.ntc(), 2, now+1000, now, redissonNoLease, "PUBLISH", "id").Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR") {
		t.Errorf("a count of 2 with one id: %v; want ERR", err)
	}
	err = p.c.Eval(t.Context(), clientScript(t, permAcquireSHA), p.ntc(), 1, now-5, now, redissonNoLease, "PUBLISH", "id").Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR") {
		t.Errorf("a lease that ended: %v; want ERR", err)
	}
	err = p.c.Eval(t.Context(), clientScript(t, permSetSHA), p.nct(), "many", "PUBLISH").Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR") {
		t.Errorf("setPermits(\"many\"): %v; want ERR", err)
	}
}

// TestPermitsChangeRefused: setPermits and addPermits are refused, naming
// trySetPermits, and change nothing (helper-100: a change that failed
// could land after a later one, and grants may have counted on it).
func TestPermitsChangeRefused(t *testing.T) {
	_, ps := newPermitClients(t, "sem:change")
	if v, err := ps[0].trySet(t, 3); v != 1 || err != nil {
		t.Fatalf("trySetPermits(3) = %v, %v", v, err)
	}
	for _, c := range []struct {
		sha  string
		keys []string
	}{{permSetSHA, ps[0].nct()}, {permAddSHA, []string{ps[0].name, ps[0].channel()}}} {
		err := ps[0].c.Eval(t.Context(), clientScript(t, c.sha), c.keys, 5, "PUBLISH").Err()
		if err == nil || !strings.Contains(err.Error(), "trySetPermits") {
			t.Errorf("%.8s (setPermits, addPermits) = %v; want refused, naming trySetPermits", c.sha, err)
		}
	}
	if n, err := ps[1].read(t, permTotalSHA); n != 3 || err != nil {
		t.Errorf("getPermits after the refusals = %v, %v; want 3", n, err)
	}
}
