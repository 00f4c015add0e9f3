// Command redlock-proxy is a Redis-protocol endpoint whose lock commands are
// Redlock rounds across independent Redis masters. See README.md.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/proxy"
	"github.com/redlock-proxy/redlock-proxy/quorum"
	"github.com/redlock-proxy/redlock-proxy/wake"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-probe" {
		os.Exit(probe(os.Args[2]))
	}
	if err := run(os.Args[1:], os.Getenv, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		if strings.HasPrefix(err.Error(), "config:") {
			// One problem per line, as written: not a log record with escaped newlines.
			fmt.Fprintln(os.Stderr, "redlock-proxy: invalid configuration ("+"redlock-proxy -h lists every setting):")
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintln(os.Stderr, "  "+line)
			}
			os.Exit(2)
		}
		slog.New(slog.NewTextHandler(os.Stderr, nil)).Error("redlock-proxy stopped", "err", err)
		os.Exit(1)
	}
}

// run serves until SIGINT or SIGTERM, then shuts down within the grace
// period; a second signal closes at once. Usage and logs go to out.
func run(args []string, getenv func(string) string, out io.Writer) error {
	cfg, err := config.Load(args, getenv, out)
	if err != nil {
		return err
	}
	logger := newLogger(cfg.LogFormat, out)
	a, err := start(cfg, logger)
	if err != nil {
		return err
	}
	defer a.close()

	if cfg.PprofListen != "" {
		pln, err := servePprof(cfg.PprofListen, logger)
		if err != nil {
			return err
		}
		defer pln.Close()
	}
	ln, err := listen(cfg)
	if err != nil {
		return err
	}
	logger.Info("redlock-proxy listening", "addr", ln.Addr().String(), "backends", a.engine.Nodes(), "quorum", a.engine.Quorum())

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	served := make(chan error, 1)
	go func() { served <- a.server.Serve(ln) }()

	select {
	case err := <-served:
		return err
	case sig := <-sigs:
		logger.Info("shutting down: finishing in-flight rounds", "signal", sig.String(), "grace", cfg.ShutdownGrace)
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
	if err := a.server.Shutdown(ctx); err != nil {
		logger.Warn("grace period over; closed the remaining connections", "err", err)
	}
	<-served
	return nil
}

func newLogger(format string, out io.Writer) *slog.Logger {
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

// redisLog carries go-redis's own log lines (pool dial failures and the
// like) into the proxy's log, in its format.
type redisLog struct{ logger *slog.Logger }

func (l redisLog) Printf(_ context.Context, format string, v ...any) {
	// DEBUG: what it reports (a failed dial, say) reaches the log as the
	// engine's own "backend down" line, once, not at every retry.
	l.logger.Debug(strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: "), "source", "go-redis")
}

// app is a running proxy: the engine over its backends, the RESP server,
// and the HTTP listener when configured.
type app struct {
	engine   *quorum.Engine
	bus      *wake.Bus
	server   *proxy.Server
	metrics  *proxy.Metrics
	http     net.Listener
	embedded *embedded
}

// start maps the configuration onto the quorum and proxy options; it starts
// embedded backends when none are configured.
func start(cfg config.Config, logger *slog.Logger) (*app, error) {
	redis.SetLogger(redisLog{logger}) // process-wide: go-redis has one logger
	for _, w := range cfg.Warnings() {
		logger.Warn(w)
	}
	a := &app{}
	backends, settings := cfg.Backends, cfg.Settings
	if len(backends) == 0 {
		settings.Quarantine = false // in-process backends restart only with the proxy itself
		var err error
		if a.embedded, err = startEmbedded(cfg.Embedded); err != nil {
			return nil, err
		}
		backends = a.embedded.backends
		logger.Warn("NO BACKENDS CONFIGURED: serving from in-memory embedded backends inside this process. " +
			"This is for trying redlock-proxy out only: these locks share one process and vanish with it. " +
			"Give real, independent Redis masters with -backends or REDLOCK_BACKENDS.")
	}
	backendTLS, err := cfg.BackendTLS()
	if err != nil {
		a.embedded.close()
		return nil, err
	}
	nodes := make([]quorum.Node, len(backends))
	links := make([]wake.Link, len(backends))
	for i, b := range backends {
		opt := &redis.Options{
			Network:  b.Network(),
			Addr:     b.Addr,
			Username: b.Username,
			Password: b.Password,
			Protocol: 2,
			PoolSize: 64,
		}
		if b.TLS {
			opt.TLSConfig = backendTLS.Clone()
		}
		node := backend.NewNode(opt)
		if a.embedded != nil {
			// miniredis reports no run_id; these servers start empty with this process.
			node.SetIdentity(a.embedded.runIDs[i], a.embedded.started)
		}
		nodes[i] = node
		ps := *opt
		ps.PoolSize, ps.DialTimeout = 4, cfg.NodeTimeout
		links[i] = backend.NewPubSub(&ps)
	}
	a.metrics = proxy.NewMetrics()
	engine, err := quorum.New(nodes,
		quorum.WithSettings(settings),
		quorum.WithNewDeployment(cfg.InitialClusterState == "new"),
		quorum.WithHealthInterval(cfg.HealthInterval),
		quorum.WithObserver(a.metrics.ObserveBackend),
		quorum.WithLogValues(cfg.LogValues),
		quorum.WithLogger(logger),
	)
	if err != nil {
		for _, l := range links {
			_ = l.Close()
		}
		a.embedded.close()
		return nil, fmt.Errorf("quorum: %w", err)
	}
	a.engine = engine
	a.bus = wake.New(links, cfg.NodeTimeout, logger)
	for _, st := range engine.Status() {
		if st.Up && st.Why != "" {
			logger.Warn("backend does not count toward lock quorums yet", "node", st.Addr, "why", st.Why)
		}
	}
	users := make([]proxy.User, len(cfg.Users))
	for i, u := range cfg.Users {
		users[i] = proxy.User{Name: u.Name, Password: u.Password, Prefix: u.Prefix, Admin: u.Admin}
	}
	scripts := make([]proxy.Script, len(cfg.Scripts))
	for i, sc := range cfg.Scripts {
		scripts[i] = proxy.Script{SHA1: sc.SHA1, Meaning: sc.Meaning, Key: sc.Key, Owner: sc.Owner, TTL: sc.TTL}
	}
	a.server = proxy.New(engine,
		proxy.WithUsers(users...),
		proxy.WithScripts(scripts...),
		proxy.WithRequirePass(cfg.RequirePass),
		proxy.WithMaxClients(cfg.MaxClients),
		proxy.WithMaxRequestSize(cfg.MaxRequestSize),
		proxy.WithMaxArgs(cfg.MaxArgs),
		proxy.WithWriteTimeout(cfg.WriteTimeout),
		proxy.WithIdleTimeout(cfg.IdleTimeout),
		proxy.WithDefaultTTL(cfg.DefaultTTL),
		proxy.WithForceRelease(cfg.AllowForceRelease),
		proxy.WithMetrics(a.metrics),
		proxy.WithBus(a.bus),
		proxy.WithLogger(logger),
		proxy.WithLogValues(cfg.LogValues),
	)
	if cfg.HTTPListen != "" {
		if a.http, err = serveHTTP(cfg.HTTPListen, engine, a.server, newRegistry(a.metrics), logger); err != nil {
			a.close()
			return nil, fmt.Errorf("http_listen: %w", err)
		}
	}
	return a, nil
}

func (a *app) close() {
	if a.http != nil {
		_ = a.http.Close()
	}
	_ = a.server.Close()
	a.bus.Close()
	_ = a.engine.Close()
	a.embedded.close()
}

// listen opens the client listener, with TLS when configured.
func listen(cfg config.Config) (net.Listener, error) {
	tlsCfg, err := cfg.ServerTLS()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil || tlsCfg == nil {
		return ln, err
	}
	return tls.NewListener(ln, tlsCfg), nil
}
