package app

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
)

// cmdline answers /debug/pprof/cmdline with the program's name only: its
// arguments may hold -requirepass or backend passwords.
func cmdline(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "%s\x00(arguments hidden: they may hold passwords)", filepath.Base(os.Args[0]))
}

// ServePprof serves Go's profiles on addr until the listener fails. It uses
// its own mux so nothing else is exposed.
func ServePprof(addr string, logger *slog.Logger) (net.Listener, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	logger.Info("pprof listening", "addr", ln.Addr().String())
	go func() { _ = http.Serve(ln, mux) }()
	return ln, nil
}
