package app

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/redlock-proxy/redlock-proxy/proxy"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// newRegistry holds the proxy's metrics, the build's identity
// (redlock_build_info{version,commit} 1, the -version flag's) and the Go
// runtime's.
func newRegistry(m *proxy.Metrics) *prometheus.Registry {
	ver, rev := Version()
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        proxy.MetricBuildInfo,
		Help:        "Always 1; the labels name the build (version and VCS commit) this replica runs.",
		ConstLabels: prometheus.Labels{"version": ver, "commit": rev},
	})
	build.Set(1)
	reg := prometheus.NewRegistry()
	reg.MustRegister(m, build, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// serveHTTP serves /metrics, /healthz (the proxy accepts clients) and
// /readyz (it accepts clients and a quorum of backends is usable: up and
// out of quarantine; never with embedded backends, which are not a lock
// service) on addr. Both answer 503 from the moment the client listener
// closes (shutdown); and the status page (/status, internal/statuspage).
func serveHTTP(addr string, embedded bool, engine *quorum.Engine, server *proxy.Server, reg *prometheus.Registry, status http.Handler, logger *slog.Logger) (net.Listener, error) {
	mux := http.NewServeMux()
	mux.Handle("/status", status)
	mux.Handle("/status/", status)
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !server.Serving() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not accepting clients (shutting down)")
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !server.Serving() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not accepting clients (shutting down)")
			return
		}
		if embedded {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready: no backends configured, serving from in-memory embedded backends (for trying redlock-proxy out only); give the Redis masters with -backends or REDLOCK_BACKENDS")
			return
		}
		usable := 0
		for _, st := range engine.Status() {
			if st.Up && st.Quarantined == 0 && st.DuplicateOf == "" {
				usable++
			}
		}
		if usable < engine.Quorum() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintf(w, "%d/%d backends usable, quorum %d\n", usable, engine.Nodes(), engine.Quorum())
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	logger.Info("http listening: /metrics /healthz /readyz /status", "addr", ln.Addr().String())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return ln, nil
}

// Probe GETs url and returns the exit status a container health check
// wants: 0 for 200 OK, 1 otherwise. (The image has no curl.)
func Probe(url string) int {
	client := &http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, resp.Status)
		return 1
	}
	return 0
}
