// Package grafana builds the redlock-proxy Grafana dashboard
// (redlock-proxy.json beside it) from typed structs and the metric names the
// proxy registers (proxy.Metric*): a renamed metric breaks this build. After
// a change, regenerate the JSON:
//
//	go generate ./deploy/grafana
//
// The test fails while the committed JSON differs from New's output; the
// e2e suite (e2e/prometheus_test.go) runs every panel's query against a real
// Prometheus scraping a real proxy.
package grafana

//go:generate go run ./gen -o redlock-proxy.json
