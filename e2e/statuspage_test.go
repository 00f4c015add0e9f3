package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// The status page in a real headless Chromium over a real proxy and three
// real redis-servers: its numbers are INFO's and REDLOCK LOCKS', a backend
// stopped mid-test shows as down, and its force-unlock button unlocks
// only after the confirmation page, and only for an admin.
func TestStatusPageInChromium(t *testing.T) {
	bctx := browser(t) // first: skips before starting anything when chromium is missing
	h := harness.New(t, 3, func(c *config.Config) {
		c.HTTPListen = "127.0.0.1:0"
		c.RequirePass = "s3cret"
		c.Users = []config.User{
			{Name: "ops", Password: "ops-pass", Admin: true},
			{Name: "app", Password: "app-pass", Prefix: "job:"},
		}
	})
	base := "http://" + h.App.HTTP.Addr().String()
	auth := func(o *redis.Options) { o.Password = "s3cret" }
	ctx := t.Context()
	admin := h.Client(auth)

	for i := 1; i <= 5; i++ {
		mustDo(t, admin, "LOCK.ACQUIRE", fmt.Sprintf("job:%d", i), fmt.Sprintf("worker-%d", i), 120000)
	}
	// A session lock, held on its own connection while the test runs.
	session := h.Client(auth, func(o *redis.Options) { o.PoolSize = 1 })
	mustDo(t, session, "LOCK.ACQUIRE", "sess:1", "leader", 30000, "SESSION")
	// Contention: job:1 asked for by another owner, found taken, three times.
	for range 3 {
		if err := admin.Do(ctx, "LOCK.ACQUIRE", "job:1", "intruder", 10000).Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("LOCK.ACQUIRE of a held lock = %v; want nil", err)
		}
	}
	// A waiter for job:2, on its own connection, until the test ends.
	waiter := h.Client(auth, func(o *redis.Options) { o.PoolSize = 1; o.ReadTimeout = -1 })
	go func() {
		_ = waiter.Do(context.Background(), "LOCK.ACQUIRE", "job:2", "patient", 10000, "WAIT", 240000).Err()
	}()
	harness.Eventually(t, "the waiter waits", func() bool { return infoField(t, admin, "clients", "blocked_clients") == "1" })

	ops := browserTab(t, bctx, "ops", "ops-pass")
	text := func(tctx context.Context, sel string) string {
		t.Helper()
		return strings.TrimSpace(browserRun(t, tctx, "reading "+sel, chromedp.Text(chromedp.CSS(sel))))
	}
	load := func(tctx context.Context, url string) {
		t.Helper()
		inBrowser(t, tctx, "loading "+url, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body")))
	}

	// The page loads, and its numbers are INFO's (connections come and go:
	// reload until one reading of each agrees).
	var mismatch string
	waitFor(t, "the page's numbers match INFO", func() bool {
		load(ops, base+"/status")
		page := map[string]string{
			"backends": text(ops, "#nodes"), "quorum": text(ops, "#quorum"), "backends_usable": text(ops, "#usable"),
			"connected_clients": text(ops, "#clients"), "blocked_clients": text(ops, "#waiting"), "session_locks": text(ops, "#session-count"),
		}
		info := map[string]string{
			"backends": infoField(t, admin, "redlock", "backends"), "quorum": infoField(t, admin, "redlock", "quorum"),
			"backends_usable":   infoField(t, admin, "redlock", "backends_usable"),
			"connected_clients": infoField(t, admin, "clients", "connected_clients"),
			"blocked_clients":   infoField(t, admin, "clients", "blocked_clients"),
			"session_locks":     infoField(t, admin, "stats", "session_locks"),
		}
		mismatch = fmt.Sprintf("page %v, INFO %v", page, info)
		return fmt.Sprint(page) == fmt.Sprint(info)
	})
	t.Logf("page = INFO: %s", mismatch)
	if got := text(ops, "#usable"); got != "3" {
		t.Fatalf("usable backends = %s; want 3", got)
	}

	// The locks are REDLOCK LOCKS', key, owner and order.
	keys := browserRun(t, ops, "reading the lock keys",
		chromedp.Evaluate[[]string](`[...document.querySelectorAll("#locks tr.lock td.key")].map(e => e.textContent)`))
	owners := browserRun(t, ops, "reading the lock owners",
		chromedp.Evaluate[[]string](`[...document.querySelectorAll("#locks tr.lock td.owner")].map(e => e.textContent)`))
	listed, err := admin.Do(ctx, "REDLOCK", "LOCKS", "", 1000).Slice()
	if err != nil {
		t.Fatalf("REDLOCK LOCKS: %v", err)
	}
	var wantKeys, wantOwners []string
	for _, l := range listed {
		l := l.([]any)
		wantKeys, wantOwners = append(wantKeys, l[0].(string)), append(wantOwners, l[1].(string))
	}
	if !slices.Equal(keys, wantKeys) || !slices.Equal(owners, wantOwners) {
		t.Fatalf("page lists %v owned by %v; REDLOCK LOCKS %v by %v", keys, owners, wantKeys, wantOwners)
	}
	for sel, want := range map[string]string{"#hot": "job:1", "#waiters": "job:2", "#sessions": "sess:1"} {
		if got := text(ops, sel); !strings.Contains(got, want) {
			t.Errorf("%s shows %q; want %s in it", sel, got, want)
		}
	}
	if got := text(ops, "#hot tr:nth-child(2)"); !strings.Contains(got, "job:1") || !strings.Contains(got, "3") {
		t.Errorf("hottest key row %q; want job:1 with 3 contended acquires", got)
	}

	forceUnlockByButton(t, h, base, bctx, ops, text, load)
	backendShowsDown(t, h, base, ops, text, load)
}

// forceUnlockByButton: a non-admin is refused the page, the confirmation
// page and the confirmed POST; an admin's click on the button leads to
// the confirmation page without unlocking, Cancel leaves the lock, and
// only the confirmation unlocks it.
func forceUnlockByButton(t *testing.T, h *harness.Harness, base string, bctx, ops context.Context,
	text func(context.Context, string) string, load func(context.Context, string)) {
	t.Helper()
	button := chromedp.Search(`//tr[td[@class="key" and text()="job:1"]]//button`)
	held := func() int { return h.Holders("job:1", "worker-1") }

	app := browserTab(t, bctx, "app", "app-pass")
	load(app, base+"/status")
	if got := text(app, "body"); !strings.Contains(got, "403") || strings.Contains(got, "job:1") {
		t.Fatalf("a non-admin's status page shows %q; want 403 and no lock", got)
	}
	// The same browser tab, first an admin's: the non-admin clicks the
	// button, then the confirmation, each refused.
	setCredentials(t, app, "ops", "ops-pass")
	load(app, base+"/status")
	setCredentials(t, app, "app", "app-pass")
	clickThen(t, app, "non-admin clicks Force unlock", button, "body > pre") // a plain-text error
	if got := text(app, "body"); !strings.Contains(got, "403") {
		t.Fatalf("the non-admin's confirmation page shows %q; want 403", got)
	}
	setCredentials(t, app, "ops", "ops-pass")
	load(app, base+"/status/unlock?key=job:1")
	setCredentials(t, app, "app", "app-pass")
	clickThen(t, app, "non-admin confirms", chromedp.CSS("#confirm"), "body > pre")
	if got := text(app, "body"); !strings.Contains(got, "403") {
		t.Fatalf("the non-admin's force-unlock shows %q; want 403", got)
	}
	if n := held(); n != 3 {
		t.Fatalf("after the non-admin's tries %d/3 backends hold job:1; want 3", n)
	}

	// The admin: the button asks first; Cancel keeps the lock.
	load(ops, base+"/status")
	clickThen(t, ops, "admin clicks Force unlock", button, "#confirm")
	if got := text(ops, "#confirm-key"); got != "job:1" {
		t.Fatalf("confirmation page for %q; want job:1", got)
	}
	if got := text(ops, "#confirm-owner"); got != "worker-1" {
		t.Errorf("confirmation page names holder %q; want worker-1", got)
	}
	if n := held(); n != 3 {
		t.Fatalf("the button alone unlocked: %d/3 backends hold job:1", n)
	}
	clickThen(t, ops, "admin cancels", chromedp.CSS("#cancel"), "#locks")
	if n := held(); n != 3 {
		t.Fatalf("Cancel unlocked: %d/3 backends hold job:1", n)
	}
	clickThen(t, ops, "admin clicks Force unlock again", button, "#confirm")
	clickThen(t, ops, "admin confirms", chromedp.CSS("#confirm"), "#result")
	if got := text(ops, "#result"); !strings.Contains(got, "Unlocked job:1") {
		t.Fatalf("result page says %q; want Unlocked job:1", got)
	}
	if n := held(); n != 0 {
		t.Fatalf("after the confirmed force-unlock %d/3 backends hold job:1", n)
	}
	clickThen(t, ops, "back to the page", chromedp.CSS("#back"), "#locks")
	if got := text(ops, "#locks"); strings.Contains(got, "job:1") || !strings.Contains(got, "job:2") {
		t.Fatalf("lock table after the unlock: %q; want job:2 and no job:1", got)
	}
}

// backendShowsDown stops backend 2 and waits for the page to call it down
// (the health monitor checks every health_interval; the wait is generous,
// the measured time is logged).
func backendShowsDown(t *testing.T, h *harness.Harness, base string, ops context.Context,
	text func(context.Context, string) string, load func(context.Context, string)) {
	t.Helper()
	stopped := time.Now()
	h.Backend[2].Kill()
	waitFor(t, "the page shows backend 2 down", func() bool {
		load(ops, base+"/status")
		return text(ops, "#backend-2 .state") == "down"
	})
	t.Logf("backend 2 shown down %v after it was stopped (health_interval %v)", time.Since(stopped).Round(time.Millisecond), h.Cfg.HealthInterval)
	if got := text(ops, "#usable"); got != "2" {
		t.Errorf("usable backends = %s after one stopped; want 2", got)
	}
	if got := text(ops, "#quorum-state"); !strings.Contains(got, "Quorum available") {
		t.Errorf("quorum state %q with 2 of 3 up; want available", got)
	}
	if got := text(ops, "#backend-0 .state") + text(ops, "#backend-1 .state"); got != "upup" {
		t.Errorf("backends 0 and 1 shown %q; want up, up", got)
	}
}

func mustDo(t *testing.T, c *redis.Client, args ...any) {
	t.Helper()
	if err := c.Do(t.Context(), args...).Err(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

// infoField reads one field of an INFO section.
func infoField(t *testing.T, c *redis.Client, section, field string) string {
	t.Helper()
	info, err := c.Info(t.Context(), section).Result()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return ""
}
