package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// bsmV10Obtain is the SHA1 bsm/redislock v0.10.0 sends its obtain script
// by (CLIENTS.md): KEYS the lock keys, ARGV[1] the value (token and
// metadata), ARGV[2] the token's length, ARGV[3] the TTL in ms; +OK when
// granted, nil when taken. The library reads any reply but nil as granted.
const bsmV10Obtain = "eb0c00d98f6f33b4262419a509002884540f30be"

// bsmV10ObtainStandIn is our own text for the EVAL a go-redis client falls
// back to on NOSCRIPT, written from the documented behaviour (single key,
// no re-obtain). It is not bsm's text and does not hash to bsmV10Obtain.
const bsmV10ObtainStandIn = `return redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[3]) and redis.status_reply("OK") or false`

// obtainAsBsmV10 sends what bsm/redislock v0.10 sends on the wire for one
// key (EVALSHA, then EVAL on NOSCRIPT) and judges the reply as it does:
// nil is "not obtained", any other reply "obtained".
func obtainAsBsmV10(ctx context.Context, c *redis.Client, key, token string, ttlMs int) (bool, error) {
	args := []any{token, len(token), ttlMs}
	err := c.EvalSha(ctx, bsmV10Obtain, []string{key}, args...).Err()
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		err = c.Eval(ctx, bsmV10ObtainStandIn, []string{key}, args...).Err()
	}
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

// TestRegisteredAcquireGrantsOnce: bsm/redislock v0.10's obtain, registered
// by an operator with its reply convention (OK when granted, nil when
// taken), raced by 100 goroutines: exactly one obtains the lock. Before
// reply conventions a registered acquire answered 0 when taken, which
// bsm v0.10 reads as obtained: 100 of 100 won.
func TestRegisteredAcquireGrantsOnce(t *testing.T) {
	h := harness.New(t, 5, func(c *config.Config) {
		c.Scripts = []config.Script{{SHA1: bsmV10Obtain, Meaning: "acquire", Key: 1, Owner: 1, TTL: 3, Granted: "OK", Taken: "nil"}}
	})
	c := h.Client()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		won  []string
		errs []error
	)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := fmt.Sprintf("token-%03d", i)
			ok, err := obtainAsBsmV10(t.Context(), c, "bsm10:lock", token, 30000)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				won = append(won, token)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	if len(won) != 1 || len(errs) != 0 {
		t.Fatalf("%d of 100 concurrent obtains won (errors %v); want exactly 1, no errors", len(won), errs)
	}
	if n := h.Holders("bsm10:lock", won[0]); n < 3 {
		t.Fatalf("the winner %s holds the lock on %d of 5 backends", won[0], n)
	}
}

// TestRegisteredConventionRequired: an acquire or extend registered without
// its reply convention is refused at config load, saying why; so is a
// convention whose two replies are the same. A release may leave it out
// (1/0). And a file that gives one loads.
func TestRegisteredConventionRequired(t *testing.T) {
	for _, tc := range []struct {
		yaml, want string
	}{
		{"{sha1: " + bsmV10Obtain + ", meaning: acquire, owner: 1, ttl: 3}", "needs its reply convention, granted and taken"},
		{"{sha1: " + bsmV10Obtain + ", meaning: acquire, ttl: 3, granted: OK}", "needs its reply convention, granted and taken"},
		{"{sha1: " + bsmV10Obtain + ", meaning: extend, granted: 1}", "needs its reply convention, granted and not_held"},
		{"{sha1: " + bsmV10Obtain + ", meaning: acquire, granted: 1, taken: 1}", "could not tell them apart"},
		{"{sha1: " + bsmV10Obtain + ", meaning: acquire, granted: OK, taken: none}", "not a reply this proxy can give"},
		{"{sha1: " + bsmV10Obtain + ", meaning: acquire, granted: OK, not_held: nil}", "not_held does not apply to meaning acquire"},
		{"{sha1: " + bsmV10Obtain + ", meaning: acquire, granted: OK, taken: nil}", ""},
		{"{sha1: " + bsmV10Obtain + ", meaning: extend, granted: 1, not_held: 0}", ""},
		{"{sha1: " + bsmV10Obtain + ", meaning: release}", ""},
	} {
		path := filepath.Join(t.TempDir(), "proxy.yaml")
		if err := os.WriteFile(path, []byte("scripts:\n  - "+tc.yaml+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load([]string{"-config", path}, func(string) string { return "" }, io.Discard)
		if err == nil {
			err = cfg.Validate()
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v; want it to load", tc.yaml, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "scripts[0]")):
			t.Errorf("%s: %v; want an error on scripts[0] saying %q", tc.yaml, err, tc.want)
		}
	}
}

// TestUnknownScriptAsksForConvention: the unknown-script error no longer
// invites a registration that would be unsafe: it says the reply convention
// is required.
func TestUnknownScriptAsksForConvention(t *testing.T) {
	h := harness.New(t, 3, nil)
	err := h.Client().Eval(t.Context(), bsmV10ObtainStandIn, []string{"k"}, "tok", 3, 1000).Err()
	if err == nil || !strings.Contains(err.Error(), "ERR unknown script") || !strings.Contains(err.Error(), "reply convention") ||
		!strings.Contains(err.Error(), "required") {
		t.Fatalf("unknown script = %v; want the error to say a reply convention is required", err)
	}
}
