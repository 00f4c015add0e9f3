package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
)

// Run serves until SIGINT or SIGTERM, then shuts down within the grace
// period; a second signal closes at once. SIGHUP is logged and ignored, as
// Redis does (a closed terminal or a service manager's reload must not stop
// the lock service): the configuration is read at start only. The client
// listener is bound before any backend is dialled, so an address in use
// fails at once. Usage and logs go to out. With the first argument
// "bootstrap" it runs Bootstrap instead.
func Run(args []string, getenv func(string) string, out io.Writer) error {
	if len(args) > 0 && args[0] == "bootstrap" {
		return Bootstrap(args[1:], getenv, out)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP) // from the start: its default action is to exit
	defer signal.Stop(hup)
	cfg, err := config.Load(args, getenv, out)
	if err != nil {
		return err
	}
	logger := NewLogger(cfg.LogFormat, out)
	ln, err := Listen(cfg)
	if err != nil {
		return err
	}
	defer ln.Close() // Serve closes it too; this covers a failed start
	a, err := Start(cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	if cfg.PprofListen != "" {
		pln, err := ServePprof(cfg.PprofListen, logger)
		if err != nil {
			return err
		}
		defer pln.Close()
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	served := make(chan error, 1)
	go func() { served <- a.Server.Serve(ln) }()
	// "listening" only once Serve took the listener: /healthz and /readyz
	// answer "shutting down" until then (a loaded CI machine's
	// TestCommandLine read /readyz in between).
	for !a.Server.Serving() && len(served) == 0 {
		time.Sleep(time.Millisecond)
	}
	ver, rev := Version()
	logger.Info("redlock-proxy listening", "addr", ln.Addr().String(), "backends", a.Engine.Nodes(), "quorum", a.Engine.Quorum(),
		"version", ver, "commit", rev)
	for stop := false; !stop; {
		select {
		case err := <-served:
			return err
		case <-hup:
			logger.Warn("SIGHUP ignored: the configuration is read at start only; restart redlock-proxy to apply a change")
		case sig := <-sigs:
			logger.Info("shutting down: finishing in-flight rounds", "signal", sig.String(), "grace", cfg.ShutdownGrace)
			stop = true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	go func() {
		select {
		case <-sigs:
			logger.Warn("second signal: closing now")
			cancel()
		case <-ctx.Done():
		}
	}()
	_ = a.Server.Shutdown(ctx) // it logs the last line: rounds finished and cut off, session locks left
	<-served
	return nil
}

func NewLogger(format string, out io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindDuration { // "250ms", not 250000000 in JSON
			a.Value = slog.StringValue(a.Value.Duration().String())
		}
		return a
	}}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(out, opts))
	}
	return slog.New(slog.NewTextHandler(out, opts))
}
