package client_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/app"
)

// TestMain serves a proxy over embedded backends, as `go run .` does, for
// the example to dial (proxyAddr).
func TestMain(m *testing.M) {
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	// Generous waits for the in-process backends: a loaded 2-core machine
	// running -race stalls them for hundreds of milliseconds at times.
	cfg.NodeTimeout, cfg.TimeoutFactor = 2*time.Second, 0.3
	a, err := app.Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ln, err := app.Listen(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go func() { _ = a.Server.Serve(ln) }()
	proxyAddr = ln.Addr().String()
	code := m.Run()
	a.Close()
	os.Exit(code)
}
