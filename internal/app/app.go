package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/statuspage"
	"github.com/redlock-proxy/redlock-proxy/proxy"
	"github.com/redlock-proxy/redlock-proxy/quorum"
	"github.com/redlock-proxy/redlock-proxy/wake"
)

// App is a running proxy: the engine over its backends, the wake-up bus,
// the RESP server, and the HTTP listener when configured.
type App struct {
	Engine   *quorum.Engine
	Bus      *wake.Bus
	Server   *proxy.Server
	Metrics  *proxy.Metrics
	HTTP     net.Listener // nil unless http_listen is set
	embedded *embedded
}

// Start maps the configuration onto the backends, the quorum engine, the
// wake-up bus and the proxy server (this is the one place that does); it
// starts embedded backends when none are configured. The server is not yet
// serving: give it a listener (Listen) with Server.Serve.
func Start(cfg config.Config, logger *slog.Logger) (*App, error) {
	redis.SetLogger(redisLog{logger}) // process-wide: go-redis has one logger
	for _, w := range cfg.Warnings() {
		logger.Warn(w)
	}
	a := &App{}
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
			"Give real, independent Redis masters with -backends or REDLOCK_BACKENDS. /readyz never says ready in this mode.")
	}
	backendTLS, err := cfg.BackendTLS()
	if err != nil {
		a.embedded.close()
		return nil, err
	}
	nodes := make([]quorum.Node, len(backends))
	links := make([]wake.Link, len(backends))
	for i, b := range backends {
		opt := backendOptions(b, backendTLS)
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
	a.Metrics = proxy.NewMetrics()
	contention := statuspage.NewContention(contentionKeys)
	engine, err := quorum.New(nodes,
		quorum.WithSettings(settings),
		quorum.WithHealthInterval(cfg.HealthInterval),
		quorum.WithObserver(a.Metrics.ObserveBackend),
		quorum.WithContention(contention.Add),
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
	a.Engine = engine
	a.Bus = wake.New(links, cfg.NodeTimeout, logger)
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
		scripts[i] = sc.Proxy()
	}
	a.Server = proxy.New(engine,
		proxy.WithUsers(users...),
		proxy.WithScripts(scripts...),
		proxy.WithRequirePass(cfg.RequirePass),
		proxy.WithLimits(cfg.Limits),
		proxy.WithMetrics(a.Metrics),
		proxy.WithBus(a.Bus),
		proxy.WithLogger(logger),
		proxy.WithLogValues(cfg.LogValues),
		proxy.WithVersion(Version()),
	)
	if cfg.HTTPListen != "" {
		page := statuspage.New(a.Server, engine, contention, logger)
		if a.HTTP, err = serveHTTP(cfg.HTTPListen, a.embedded != nil, engine, a.Server, newRegistry(a.Metrics), page, logger); err != nil {
			a.Close()
			return nil, fmt.Errorf("http_listen: %w", err)
		}
	}
	return a, nil
}

// contentionKeys is how many keys the status page's hottest-keys table
// tracks (statuspage.Contention).
const contentionKeys = 256

// Close stops everything Start started.
func (a *App) Close() {
	if a.HTTP != nil {
		_ = a.HTTP.Close()
	}
	_ = a.Server.Close()
	a.Bus.Close()
	_ = a.Engine.Close()
	a.embedded.close()
}

// Listen opens the client listener, with TLS when configured.
func Listen(cfg config.Config) (net.Listener, error) {
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

// redisLog carries go-redis's own log lines (pool dial failures and the
// like) into the proxy's log, in its format.
type redisLog struct{ logger *slog.Logger }

func (l redisLog) Printf(_ context.Context, format string, v ...any) {
	// DEBUG: what it reports (a failed dial, say) reaches the log as the
	// engine's own "backend down" line, once, not at every retry.
	l.logger.Debug(strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: "), "source", "go-redis")
}

// backendOptions is how the proxy connects to backend b.
func backendOptions(b config.Backend, backendTLS *tls.Config) *redis.Options {
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
	return opt
}
