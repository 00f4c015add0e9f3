package e2e

// The native lock commands through two replicas, and Kleppmann's scenario
// played with a real paused client.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// LOCK.ACQUIRE / EXTEND / RELEASE / TOKEN through two replicas: tokens grow
// across owners, keys and replicas; TOKEN reads the holder's (an owner's
// own, when named); a plain SET NX PX lock has none yet; RESP3 gets the
// same integers and nulls; bad input gets clear errors.
func TestNativeLocks(t *testing.T) {
	h := harness.New(t, 5, nil)
	_, addr2 := h.Serve()
	one, two := h.Client(), redis.NewClient(&redis.Options{Addr: addr2, MaxRetries: -1})
	defer two.Close()
	ctx := t.Context()

	t1, err := one.Do(ctx, "LOCK.ACQUIRE", "job:1", "alice", 30000).Int64()
	if err != nil || t1 < 1 {
		t.Fatalf("LOCK.ACQUIRE = %d, %v; want a token", t1, err)
	}
	if err := two.Do(ctx, "LOCK.ACQUIRE", "job:1", "bob", 30000).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("LOCK.ACQUIRE of a held lock from the other replica = %v; want nil", err)
	}
	for _, tc := range []struct {
		args []any
		want any // int64, or nil for a null reply
	}{
		{[]any{"LOCK.TOKEN", "job:1"}, t1},
		{[]any{"LOCK.TOKEN", "job:1", "alice"}, t1},
		{[]any{"LOCK.TOKEN", "job:1", "bob"}, nil},
		{[]any{"LOCK.EXTEND", "job:1", "bob", 60000}, int64(0)},
		{[]any{"LOCK.EXTEND", "job:1", "alice", 60000}, int64(1)},
		{[]any{"LOCK.TOKEN", "job:1"}, t1}, // an extend keeps the token
		{[]any{"GET", "job:1"}, "alice"},   // a plain lock on the backends
		{[]any{"LOCK.RELEASE", "job:1", "bob"}, int64(0)},
		{[]any{"LOCK.RELEASE", "job:1", "alice"}, int64(1)},
		{[]any{"LOCK.TOKEN", "job:1"}, nil},
	} {
		got, err := two.Do(ctx, tc.args...).Result()
		if errors.Is(err, redis.Nil) {
			got, err = nil, nil
		}
		if err != nil || got != tc.want {
			t.Fatalf("%v = %#v, %v; want %#v", tc.args, got, err, tc.want)
		}
	}
	last := t1
	for i, c := range []*redis.Client{two, one, two} {
		key := fmt.Sprint("job:", 1+i%2)
		tok, err := c.Do(ctx, "LOCK.ACQUIRE", key, "carol", 30000).Int64()
		if err != nil || tok <= last {
			t.Fatalf("acquire %d = %d, %v; want a token above %d", i, tok, err, last)
		}
		last = tok
		if err := c.Do(ctx, "LOCK.RELEASE", key, "carol").Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := one.SetNX(ctx, "plain", "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	// A SET NX PX lock gets its token at its first read, through either
	// replica, and keeps it; the next owner's is larger.
	plain, err := two.Do(ctx, "LOCK.TOKEN", "plain", "v").Int64()
	if err != nil || plain <= last {
		t.Fatalf("LOCK.TOKEN of a SET NX PX lock = %d, %v; want a token above %d", plain, err, last)
	}
	if again, err := one.Do(ctx, "LOCK.TOKEN", "plain").Int64(); err != nil || again != plain {
		t.Fatalf("LOCK.TOKEN again, through the other replica = %d, %v; want %d", again, err, plain)
	}
	if err := one.Eval(ctx, harness.UnlockScript, []string{"plain"}, "v").Err(); err != nil {
		t.Fatal(err)
	}
	if err := two.SetNX(ctx, "plain", "w", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	next, err := one.Do(ctx, "LOCK.TOKEN", "plain").Int64()
	if err != nil || next <= plain {
		t.Fatalf("the next SET NX PX owner's token = %d, %v; want above %d", next, err, plain)
	}
	last = next

	docs, err := one.Do(ctx, "COMMAND", "DOCS", "LOCK.ACQUIRE", "GET").Result()
	if d := fmt.Sprint(docs); err != nil || !strings.Contains(d, "lock.acquire:map[") || !strings.Contains(d, "WAIT ms] [SESSION]") || strings.Contains(d, "get:") {
		t.Fatalf("COMMAND DOCS LOCK.ACQUIRE GET = %v, %v; want lock.acquire's summary (and nothing for GET)", docs, err)
	}

	resp3 := h.Client(func(o *redis.Options) { o.Protocol = 3 })
	if tok, err := resp3.Do(ctx, "LOCK.ACQUIRE", "job:3", "dave", 30000).Int64(); err != nil || tok <= last {
		t.Fatalf("RESP3 LOCK.ACQUIRE = %d, %v; want a token above %d", tok, err, last)
	}
	if err := resp3.Do(ctx, "LOCK.ACQUIRE", "job:3", "erin", 30000).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("RESP3 LOCK.ACQUIRE of a held lock = %v; want a null", err)
	}

	for args, want := range map[string]string{
		"LOCK.ACQUIRE k o 0":            "ERR invalid expire time in 'lock.acquire' command",
		"LOCK.ACQUIRE k o 1000 WAIT -1": "ERR WAIT takes milliseconds from 0 to 300000 (max_wait)",
		"LOCK.ACQUIRE k o 1000 WAIT":    "ERR syntax error",
		"LOCK.ACQUIRE k o 1000 SESSION": "ERR a SESSION lock needs ttl-ms of at least 1500",
		"LOCK.ACQUIRE k o 9000 FOREVER": "ERR syntax error",
		"LOCK.ACQUIRE k o 700000":       "ERR lock TTL 700000 ms exceeds max_ttl",
		"LOCK.EXTEND k o x":             "ERR invalid expire time in 'lock.extend' command",
		"LOCK.TOKEN k o extra":          "ERR wrong number of arguments for 'lock.token' command",
		"LOCK.RELEASE k":                "ERR wrong number of arguments for 'lock.release' command",
	} {
		var a []any
		for _, f := range strings.Fields(args) {
			a = append(a, f)
		}
		if err := one.Do(ctx, a...).Err(); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s = %v; want %q", args, err, want)
		}
	}
}

// fencedClientEnv makes the test binary run as client 1 of Kleppmann's
// scenario: it takes the lock, says its token, does its "work" (waits for a
// line on stdin, so that the test decides when the work is done) and then
// writes to the fenced store with the token, and says what the store answered.
const fencedClientEnv = "REDLOCK_TEST_FENCED_CLIENT"

func fencedClient(proxyAddr, storeURL string) {
	c := redis.NewClient(&redis.Options{Addr: proxyAddr, MaxRetries: -1})
	defer c.Close()
	tok, err := c.Do(context.Background(), "LOCK.ACQUIRE", "storage", "client-1", 2000).Int64()
	if err != nil {
		fmt.Println("acquire failed:", err)
		os.Exit(1)
	}
	fmt.Println("token", tok)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // the "work", during which the test pauses this process
	resp, err := http.Get(fmt.Sprintf("%s/write?token=%d&data=from-client-1", storeURL, tok))
	if err != nil {
		fmt.Println("write failed:", err)
		os.Exit(1)
	}
	_ = resp.Body.Close()
	fmt.Println("store answered", resp.StatusCode)
}

// fencedStore is the storage service of Kleppmann's example: it refuses a
// write whose token is not larger than the last one it accepted.
type fencedStore struct {
	mu   sync.Mutex
	last int64
	data string
}

func (s *fencedStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tok, err := strconv.ParseInt(r.URL.Query().Get("token"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || tok <= s.last {
		w.WriteHeader(http.StatusConflict)
		return
	}
	s.last, s.data = tok, r.URL.Query().Get("data")
}

// Kleppmann's scenario ("How to do distributed locking", 2016): client 1
// takes the lock (token t) and is paused (SIGSTOP) past its lease; client 2
// takes it (token > t) and writes to the store; client 1 resumes and its
// write with t is refused.
func TestFencingRefusesAPausedClient(t *testing.T) {
	// A lock-delay shorter than the default 5s keeps client 2's wait for
	// the expired lock within harness.Eventually's 5s (TestLockDelay
	// plays the delay itself).
	h := harness.New(t, 5, func(c *config.Config) { c.NativeLockDelay = time.Second })
	store := &fencedStore{}
	srv := httptest.NewServer(store)
	defer srv.Close()

	child := exec.Command(os.Args[0], h.Addr, srv.URL)
	child.Env = append(os.Environ(), fencedClientEnv+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	work, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Signal(syscall.SIGCONT); _ = child.Process.Kill(); _ = child.Wait() })
	lines := bufio.NewReader(out)
	first, err := lines.ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "token ") {
		t.Fatalf("client 1 said %q, %v; want its token", first, err)
	}
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil { // a GC pause, in the critical section
		t.Fatal(err)
	}
	t1, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(first, "token ")), 10, 64)

	c2 := h.Client()
	var t2 int64
	harness.Eventually(t, "client 2 gets the lock once client 1's lease ran out", func() bool {
		t2, err = c2.Do(t.Context(), "LOCK.ACQUIRE", "storage", "client-2", 10000).Int64()
		return err == nil
	})
	if t2 <= t1 {
		t.Fatalf("client 2's token %d is not above client 1's %d", t2, t1)
	}
	resp, err := http.Get(fmt.Sprintf("%s/write?token=%d&data=from-client-2", srv.URL, t2))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("client 2's write = %v, %v", resp, err)
	}
	_ = resp.Body.Close()

	if err := child.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(work, "done\n"); err != nil { // client 1's work ends: it writes with its old token
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(lines)
	if err := child.Wait(); err != nil {
		t.Fatalf("client 1: %v (%s)", err, rest)
	}
	if got := strings.TrimSpace(string(rest)); got != "store answered 409" {
		t.Fatalf("client 1 after its pause: %q; want its write refused (409)", got)
	}
	if store.data != "from-client-2" {
		t.Fatalf("the store holds %q; want client 2's write", store.data)
	}
}
