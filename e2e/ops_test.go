package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// scrape reads /metrics into name{labels} -> value.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				out[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestMetricsAndHealth(t *testing.T) {
	h := harness.New(t, 5, func(c *config.Config) { c.HTTPListen = "127.0.0.1:0" })
	base := "http://" + h.App.HTTP.Addr().String()
	c, ctx := h.Client(), t.Context()

	if code, body := get(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 200 || body != "5/5 backends usable, quorum 3\n" {
		t.Fatalf("/readyz = %d %q", code, body)
	}
	before := scrape(t, base)

	// The workload: 3 acquired, 2 taken, 1 released, 1 not held, 1 extended, 2 reads.
	for i := range 3 {
		if ok, _ := c.SetNX(ctx, fmt.Sprint("m:", i), "tok", 10*time.Second).Result(); !ok {
			t.Fatal("acquire failed")
		}
	}
	for range 2 {
		if ok, _ := c.SetNX(ctx, "m:0", "other", 10*time.Second).Result(); ok {
			t.Fatal("contender won")
		}
	}
	c.Eval(ctx, harness.UnlockScript, []string{"m:1"}, "tok")
	c.Eval(ctx, harness.UnlockScript, []string{"m:2"}, "wrong")
	c.Eval(ctx, harness.ExtendScript, []string{"m:2"}, "tok", 20000)
	c.Get(ctx, "m:0")
	c.PTTL(ctx, "m:0")

	after := scrape(t, base)
	want := map[string]float64{
		`redlock_rounds_total{command="acquire",outcome="ok"}`:       3,
		`redlock_rounds_total{command="acquire",outcome="taken"}`:    2,
		`redlock_contended_rounds_total`:                             2,
		`redlock_rounds_total{command="release",outcome="ok"}`:       1,
		`redlock_rounds_total{command="release",outcome="not_held"}`: 1,
		`redlock_rounds_total{command="extend",outcome="ok"}`:        1,
		`redlock_rounds_total{command="read",outcome="ok"}`:          2,
		`redlock_round_duration_seconds{command="acquire"}_count`:    5,
		`redlock_validity_margin_seconds_count`:                      4, // 3 acquires + 1 extend
		`redlock_rollbacks_total`:                                    0, // a taken round that wrote nothing rolls nothing back
	}
	for k, v := range want {
		if got := after[k] - before[k]; got != v {
			t.Errorf("%s moved by %v, want %v", k, got, v)
		}
	}
	for _, b := range h.Backend {
		if after[fmt.Sprintf(`redlock_backend_up{backend=%q}`, b.Addr)] != 1 {
			t.Errorf("backend %s not up in /metrics", b.Addr)
		}
		if after[fmt.Sprintf(`redlock_backend_request_duration_seconds{backend=%q}_count`, b.Addr)] < 10 {
			t.Errorf("backend %s latency histogram barely moved", b.Addr)
		}
	}
	if after["redlock_max_clients"] != float64(h.Cfg.MaxClients) || after["redlock_waiting_clients"] != 0 {
		t.Errorf("max clients %v (want %d), waiting clients %v (want 0)", after["redlock_max_clients"], h.Cfg.MaxClients, after["redlock_waiting_clients"])
	}
	if after["redlock_client_connections"] < 1 || after["redlock_quorum_available"] != 1 {
		t.Errorf("client connections %v, quorum available %v", after["redlock_client_connections"], after["redlock_quorum_available"])
	}

	for _, b := range h.Backend[:3] {
		b.Kill()
	}
	harness.Eventually(t, "/readyz never turned 503 with 3 of 5 backends down", func() bool {
		code, _ := get(t, base+"/readyz")
		return code == http.StatusServiceUnavailable
	})
	if code, _ := get(t, base+"/healthz"); code != 200 {
		t.Fatalf("/healthz = %d while the process is fine", code)
	}
	if got := scrape(t, base)["redlock_quorum_available"]; got != 0 {
		t.Fatalf("redlock_quorum_available = %v with 3 of 5 down", got)
	}
}
