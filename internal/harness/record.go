package harness

import (
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/internal/transcript"
)

// Record, when REDLOCK_RECORD names a directory, puts cmd/wirerec's
// recorder between the test's clients and the proxy and writes their
// traffic to <dir>/<name>.jsonl: how the Go clients' transcripts in
// compat/transcripts were made. Otherwise it does nothing. With
// REDLOCK_RECORD_UPSTREAM=redis the clients talk to one fresh plain
// redis-server instead, and the session, <dir>/<name>-redis.jsonl, shows the
// texts of their scripts (transcript.Header.Upstream).
func (h *Harness) Record(name, client, scenario string, leaseMS int64) {
	dir := os.Getenv("REDLOCK_RECORD")
	if dir == "" {
		return
	}
	head := transcript.Header{Client: client, Scenario: scenario, Replicas: 1, LeaseMS: leaseMS}
	upstream := h.Addr
	if os.Getenv("REDLOCK_RECORD_UPSTREAM") == "redis" {
		upstream, name, head.Upstream = redistest.Start(h.t, 1)[0].Addr, name+"-redis", "redis"
		head.Scenario += " (against one redis-server, its script cache empty)"
	}
	f, err := os.Create(filepath.Join(dir, name+".jsonl"))
	if err != nil {
		h.t.Fatal(err)
	}
	rec, err := transcript.NewRecorder(f, head)
	if err != nil {
		h.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	go func() { _ = rec.Serve(ln, 0, upstream) }()
	h.Addr = ln.Addr().String()
	h.t.Cleanup(func() { // after the test's clients closed (registered later, so run first)
		_ = ln.Close()
		done := make(chan struct{})
		go func() { rec.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			h.t.Errorf("recording %s: a connection stayed open 10s after the test", name)
		}
		_ = f.Close()
	})
}
