package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/deploy/grafana"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestDashboardAndAlertsAgainstPrometheus starts a real Prometheus (Debian's)
// scraping a real proxy over five redis-servers under a little load (plain
// and fenced locks, a contended lock, a rollback, a session lock, a waiter),
// with deploy/prometheus/alerts.yml loaded, and runs every dashboard panel's
// query and every alert's expression through Prometheus's HTTP API: each
// must return at least one series, so no panel shows "No data" and no alert
// watches a series that does not exist because of a typo or a rename.
// Alert expressions run with their comparisons made "bool" (a comparison
// then answers 0 or 1 for every series instead of filtering), so a healthy
// system still returns their series. Then three backends are killed and
// RedlockQuorumLost and RedlockBackendDown must go pending.
func TestDashboardAndAlertsAgainstPrometheus(t *testing.T) {
	promBin := needTool(t, "prometheus", "prometheus")
	h := harness.New(t, 5, func(c *config.Config) { c.HTTPListen = "127.0.0.1:0" })
	target := h.App.HTTP.Addr().String()
	api := startPrometheus(t, promBin, target)

	promLoad(t, h)
	// Enough scrapes after the load for rate() over 1m: two samples at least.
	waitQuery(t, api, `count_over_time(redlock_commands_total[1m]) >= 5`)
	// The load shows: a contended acquire, a rollback, a session lock, a waiter.
	for _, e := range []string{`redlock_contended_rounds_total > 0`, `redlock_rollbacks_total > 0`,
		`redlock_session_locks > 0`, `redlock_waiting_clients > 0`, `redlock_build_info == 1`} {
		waitQuery(t, api, e)
	}

	if n := query(t, api, `ALERTS{alertname=~"RedlockQuorumLost|RedlockBackendDown|RedlockOneFailureFromNoQuorum"}`); n != 0 {
		t.Errorf("%d quorum or backend alerts pending or firing on a healthy deployment", n)
	}
	subst := strings.NewReplacer("$instance", ".*", "$__rate_interval", "1m")
	titles, exprs := grafana.New().Queries()
	for i, e := range exprs {
		if n := query(t, api, subst.Replace(e)); n == 0 {
			t.Errorf("panel %q: %s returns no series", titles[i], e)
		}
	}
	comparison := regexp.MustCompile(`(==|!=|>=|<=|>|<)(\s)`)
	rules := alertRules(t)
	for _, r := range rules {
		e := comparison.ReplaceAllString(r.Expr, "$1 bool$2")
		if n := query(t, api, e); n == 0 {
			t.Errorf("alert %s: %s returns no series", r.Alert, e)
		}
	}
	// Prometheus loaded the very rules and evaluates them without error.
	var rs struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name, Health, LastError string
				}
			}
		}
	}
	getJSON(t, api+"/api/v1/rules", &rs)
	evaluated := 0
	for _, g := range rs.Data.Groups {
		for _, r := range g.Rules {
			if r.Health != "ok" {
				t.Errorf("Prometheus evaluates %s as %q: %s", r.Name, r.Health, r.LastError)
			}
			evaluated++
		}
	}
	if evaluated != len(rules) {
		t.Errorf("Prometheus loaded %d rules, alerts.yml has %d", evaluated, len(rules))
	}
	t.Logf("%d panel queries and %d alert expressions each returned series from a live Prometheus", len(exprs), len(rules))

	// The alerts react to the real thing: three of five backends killed,
	// the quorum-lost and backend-down alerts go pending (their "for"
	// keeps them from firing within a test), and none was pending before.
	for _, b := range h.Backend[:3] {
		b.Kill()
	}
	for _, alert := range []string{"RedlockQuorumLost", "RedlockBackendDown"} {
		waitQuery(t, api, `ALERTS{alertname="`+alert+`"}`)
	}
	t.Log("RedlockQuorumLost and RedlockBackendDown went pending with three of five backends killed")
}

// promLoad runs a little of everything the dashboard shows.
func promLoad(t *testing.T, h *harness.Harness) {
	ctx := t.Context()
	c := h.Client()
	for i := range 20 {
		k := fmt.Sprint("prom:", i)
		if ok, err := c.SetNX(ctx, k, "tok", 10*time.Second).Result(); !ok || err != nil {
			t.Fatalf("SET %s NX: %v %v", k, ok, err)
		}
		c.Eval(ctx, harness.ExtendScript, []string{k}, "tok", 20000)
		c.Eval(ctx, harness.UnlockScript, []string{k}, "tok")
	}
	// Contention: a second owner finds the lock taken.
	if ok, _ := c.SetNX(ctx, "prom:held", "a", time.Minute).Result(); !ok {
		t.Fatal("acquire prom:held failed")
	}
	if ok, _ := c.SetNX(ctx, "prom:held", "b", time.Minute).Result(); ok {
		t.Fatal("a contender took prom:held")
	}
	// A rollback: three of five backends already hold the key (written
	// behind the proxy's back), so the acquire wins two, loses, and undoes
	// the two.
	for _, b := range h.Backend[:3] {
		if err := b.Client().Set(ctx, "prom:split", "other", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _ := c.SetNX(ctx, "prom:split", "me", time.Minute).Result(); ok {
		t.Fatal("acquire of a key three backends hold succeeded")
	}
	// A session lock, held on its own connection.
	sess := h.Client()
	if err := sess.Do(ctx, "LOCK.ACQUIRE", "prom:session", "me", 3000, "SESSION").Err(); err != nil {
		t.Fatalf("LOCK.ACQUIRE SESSION: %v", err)
	}
	// A waiter, queued behind prom:held until the test ends.
	waiter := h.Client()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = waiter.Do(ctx, "LOCK.ACQUIRE", "prom:held", "waiter", 60000, "WAIT", 30000).Err()
	}()
	t.Cleanup(wg.Wait)
	harness.Eventually(t, "the waiter never showed in INFO", func() bool {
		info, _ := c.Info(ctx, "clients").Result()
		return strings.Contains(info, "blocked_clients:1\r\n")
	})
	if n := h.App.Metrics.Rounds("acquire", "taken"); n < 2 {
		t.Fatalf("%d taken acquire rounds, want 2 or more", n)
	}
}

// startPrometheus runs prometheus scraping target every second (job
// redlock-proxy, as alerts.yml assumes) with the alert rules loaded, and
// returns its API's base URL once it is ready.
func startPrometheus(t *testing.T, bin, target string) string {
	dir := t.TempDir()
	rules, err := filepath.Abs("deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: redlock-proxy
    static_configs: [{targets: [%q]}]
`, rules, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out bytes.Buffer
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("prometheus output:\n%s", out.String())
		}
	})
	api := "http://" + addr
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case <-exited:
			t.Fatalf("prometheus exited: %s", out.String())
		default:
		}
		if resp, err := http.Get(api + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return api
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 2 minutes: %s", out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// query runs an instant PromQL query and returns how many series it gave.
func query(t *testing.T, api, expr string) int {
	t.Helper()
	var r struct {
		Status, Error string
		Data          struct{ Result []json.RawMessage }
	}
	getJSON(t, api+"/api/v1/query?query="+url.QueryEscape(expr), &r)
	if r.Status != "success" {
		t.Errorf("query %s: %s %s", expr, r.Status, r.Error)
	}
	return len(r.Data.Result)
}

// waitQuery waits until expr returns a series: generously, since scrapes
// and rule evaluations run late on a loaded machine.
func waitQuery(t *testing.T, api, expr string) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); query(t, api, expr) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 90s, Prometheus still answers no series for %s", expr)
		}
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}
