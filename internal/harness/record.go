package harness

import (
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/transcript"
)

// Record, when REDLOCK_RECORD names a directory, puts cmd/wirerec's
// recorder between the test's clients and the proxy and writes their
// traffic to <dir>/<name>.jsonl: how the Go clients' transcripts in
// compat/transcripts were made. Otherwise it does nothing.
func (h *Harness) Record(name, client, scenario string, leaseMS int64) {
	dir := os.Getenv("REDLOCK_RECORD")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name+".jsonl"))
	if err != nil {
		h.t.Fatal(err)
	}
	rec, err := transcript.NewRecorder(f, transcript.Header{Client: client, Scenario: scenario, Replicas: 1, LeaseMS: leaseMS})
	if err != nil {
		h.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	upstream := h.Addr
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
