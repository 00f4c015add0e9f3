package proxy

import (
	"github.com/redlock-proxy/redlock-proxy/wake"
	"log/slog"
	"time"
)

// Option configures a Server.
type Option func(*options)

type options struct {
	requirePass       string
	maxClients        int
	maxRequestSize    int
	maxArgs           int
	writeTimeout      time.Duration
	idleTimeout       time.Duration
	defaultTTL        time.Duration
	allowForceRelease bool
	metrics           *Metrics
	users             []User
	scripts           []Script
	logger            *slog.Logger
	logValues         bool
	bus               *wake.Bus
}

func defaultOptions() options {
	return options{
		maxClients:        10000,
		maxRequestSize:    64 << 10,
		maxArgs:           4096,
		writeTimeout:      10 * time.Second,
		allowForceRelease: true,
		logger:            slog.Default(),
	}
}

// WithRequirePass makes clients AUTH with password first. Default: no password.
func WithRequirePass(password string) Option { return func(o *options) { o.requirePass = password } }

// WithMaxClients caps client connections; one more gets
// "ERR max number of clients reached" and is closed. Default 10000.
func WithMaxClients(n int) Option { return func(o *options) { o.maxClients = n } }

// WithMaxRequestSize caps one request in bytes; a larger one gets a protocol
// error and its connection is closed. Default 64 KiB.
func WithMaxRequestSize(n int) Option { return func(o *options) { o.maxRequestSize = n } }

// WithMaxArgs caps the arguments of one command; more get a protocol error
// and the connection is closed. Default 4096.
func WithMaxArgs(n int) Option { return func(o *options) { o.maxArgs = n } }

// WithWriteTimeout closes a connection whose replies cannot be written for d
// (a client that stopped reading), freeing what it held. Default 10s.
func WithWriteTimeout(d time.Duration) Option { return func(o *options) { o.writeTimeout = d } }

// WithIdleTimeout closes connections that send nothing for d. Default 0: never.
func WithIdleTimeout(d time.Duration) Option { return func(o *options) { o.idleTimeout = d } }

// WithDefaultTTL gives SET NX without a TTL this one. Default 0: such a SET is
// refused, since a lock without expiry is never freed if its owner dies.
func WithDefaultTTL(d time.Duration) Option { return func(o *options) { o.defaultTTL = d } }

// WithForceRelease lets DEL/UNLINK delete locks whoever holds them. Default true.
func WithForceRelease(allow bool) Option { return func(o *options) { o.allowForceRelease = allow } }

// WithBus sets the bus that carries PUBLISH / SUBSCRIBE and lock wake-ups
// between replicas. Default: one that reaches this replica's clients only.
func WithBus(b *wake.Bus) Option { return func(o *options) { o.bus = b } }

// WithLogger sets the logger. Default slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithMetrics makes the server count into m, which can then be registered
// with Prometheus. Default: a private Metrics, shown by INFO only.
func WithMetrics(m *Metrics) Option { return func(o *options) { o.metrics = m } }

// WithUsers adds named users (AUTH name password), each limited to its key
// prefix. With users and no requirepass, the default user is off. Default none.
func WithUsers(users ...User) Option { return func(o *options) { o.users = append(o.users, users...) } }

// WithScripts registers lock scripts by SHA1 (see Script). Default none.
func WithScripts(scripts ...Script) Option {
	return func(o *options) { o.scripts = append(o.scripts, scripts...) }
}

// WithLogValues lets log lines (the force-unlock audit) name lock keys.
// Default false: keys can carry customer data.
func WithLogValues(on bool) Option { return func(o *options) { o.logValues = on } }
