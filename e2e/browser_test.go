package e2e

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds Debian's chromium (or another Chromium-based browser).
// Missing, the test is skipped loudly, but fails when CI=true: .ci/run
// installs the package, so a CI run without it is a broken CI.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "NO CHROMIUM: the status page's browser test needs Debian's chromium (apt-get install -y --no-install-recommends chromium; .ci/run installs it)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Log(strings.Repeat("!", 72))
	t.Log(msg)
	t.Log(strings.Repeat("!", 72))
	t.Skip(msg)
	return ""
}

// browser starts one headless Chromium for the test and returns its
// context; each tab made from it (browserTab) has its own Authorization header.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Flag("disable-dev-shm-usage", true), // containers give /dev/shm 64 MB
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to start as root with its sandbox on ("Running
		// as root without --no-sandbox is not supported"); CI runs as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	t.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(bctx); err != nil { // starts the browser; its context has no timeout of its own
		t.Fatalf("starting chromium: %v", err)
	}
	return bctx
}

// browserTab opens a tab that sends HTTP Basic credentials user:pass on every
// request (none when user and pass are empty).
func browserTab(t *testing.T, browserCtx context.Context, user, pass string) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	setCredentials(t, ctx, user, pass)
	return ctx
}

// setCredentials changes the tab's Authorization header.
func setCredentials(t *testing.T, ctx context.Context, user, pass string) {
	t.Helper()
	hdr := network.Headers{}
	if user != "" || pass != "" {
		hdr["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: hdr}); err != nil {
		t.Fatalf("setting credentials: %v", err)
	}
}

// inBrowser runs browser steps with a generous bound of its own.
func inBrowser(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	browserRun(t, ctx, what, chromedp.Steps(steps...))
}

// browserRun runs one action, bounded, and returns its value.
func browserRun[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// waitFor polls cond for up to a minute: a page load on a loaded two-core
// machine can take seconds, and the wait costs time only when it fails.
func waitFor(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > time.Minute {
			t.Fatalf("after %v: %s", time.Minute, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// tryText reads the text of the first element sel matches, or reports
// false: while a page is being replaced a read can fail ("No node with
// given id"), and a missing element is waited for only briefly.
func tryText(ctx context.Context, sel string) (string, bool) {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(sel)))
	return strings.TrimSpace(s), err == nil
}

// clickThen clicks what click selects and waits until the page it leads to
// shows an element matching until.
func clickThen[S chromedp.Selectable](t *testing.T, ctx context.Context, what string, click S, until string) {
	t.Helper()
	inBrowser(t, ctx, what, chromedp.Click(click))
	waitFor(t, what+": "+until+" shown", func() bool { _, ok := tryText(ctx, until); return ok })
}
