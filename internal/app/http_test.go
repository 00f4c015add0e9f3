package app

import (
	"testing"

	"github.com/redlock-proxy/redlock-proxy/proxy"
)

// The registry carries redlock_build_info{version,commit} = 1, with the
// labels the -version flag prints, so a dashboard can show which build each
// replica runs (issue 28).
func TestBuildInfoMetric(t *testing.T) {
	families, err := newRegistry(proxy.NewMetrics()).Gather()
	if err != nil {
		t.Fatal(err)
	}
	ver, rev := Version()
	for _, mf := range families {
		if mf.GetName() != proxy.MetricBuildInfo {
			continue
		}
		if len(mf.GetMetric()) != 1 {
			t.Fatalf("%d %s series, want 1", len(mf.GetMetric()), proxy.MetricBuildInfo)
		}
		m := mf.GetMetric()[0]
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["version"] != ver || labels["commit"] != rev || len(labels) != 2 || m.GetGauge().GetValue() != 1 {
			t.Fatalf("%s = %v %v, want {version=%q,commit=%q} 1", proxy.MetricBuildInfo, labels, m.GetGauge().GetValue(), ver, rev)
		}
		return
	}
	t.Fatalf("no %s in the registry", proxy.MetricBuildInfo)
}
