package proxy

import (
	"log/slog"
	"time"

	"github.com/redlock-proxy/redlock-proxy/wake"
)

// Option configures a Server.
type Option func(*options)

type options struct {
	Limits
	requirePass string
	metrics     *Metrics
	users       []User
	scripts     []Script
	logger      *slog.Logger
	logValues   bool
	bus         *wake.Bus
	build       [2]string // the proxy's version and commit, for INFO
}

func defaultOptions() options {
	return options{Limits: DefaultLimits(), logger: slog.Default()}
}

// WithLimits replaces every limit at once (the configuration carries a
// whole Limits).
func WithLimits(l Limits) Option { return func(o *options) { o.Limits = l } }

// WithRequirePass makes clients AUTH with password first. Default: no password.
func WithRequirePass(password string) Option { return func(o *options) { o.requirePass = password } }

// WithMaxClients caps client connections; one more gets
// "ERR max number of clients reached" and is closed. Default 10000.
func WithMaxClients(n int) Option { return func(o *options) { o.MaxClients = n } }

// WithMaxRequestSize caps one request in bytes; a larger one gets a protocol
// error and its connection is closed. Default 64 KiB.
func WithMaxRequestSize(n int) Option { return func(o *options) { o.MaxRequestSize = n } }

// WithMaxArgs caps the arguments of one command; more get a protocol error
// and the connection is closed. Default 4096.
func WithMaxArgs(n int) Option { return func(o *options) { o.MaxArgs = n } }

// WithWriteTimeout closes a connection whose replies cannot be written for d
// (a client that stopped reading), freeing what it held. Default 10s.
func WithWriteTimeout(d time.Duration) Option { return func(o *options) { o.WriteTimeout = d } }

// WithIdleTimeout closes connections that send nothing for d. Default 0: never.
func WithIdleTimeout(d time.Duration) Option { return func(o *options) { o.IdleTimeout = d } }

// WithDefaultTTL gives SET NX without a TTL this one. Default 0: such a SET
// takes a connection-bound lock (boundlocks.go).
func WithDefaultTTL(d time.Duration) Option { return func(o *options) { o.DefaultTTL = d } }

// WithBoundLease sets the lease of connection-bound locks. Default 0: 10s,
// or max_ttl when shorter.
func WithBoundLease(d time.Duration) Option { return func(o *options) { o.BoundLease = d } }

// WithSessionTick sets how often session and connection-bound locks are
// renewed. Default 500ms.
func WithSessionTick(d time.Duration) Option { return func(o *options) { o.SessionTick = d } }

// WithForceRelease lets DEL/UNLINK delete locks whoever holds them. Default true.
func WithForceRelease(allow bool) Option { return func(o *options) { o.AllowForceRelease = allow } }

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

// WithVersion names the proxy's version and commit in INFO server
// (redlock_proxy_version, redlock_proxy_git_sha1).
func WithVersion(version, commit string) Option {
	return func(o *options) { o.build = [2]string{version, commit} }
}

// Script is a lock script an operator registers by SHA1: what it means,
// where its KEYS and ARGV hold the lock key, the owner value and the TTL,
// and its reply convention, in which the proxy answers. The script text
// itself still never reaches a backend: the proxy runs the meaning as
// quorum rounds. A script with a Problem is not registered.
type Script struct {
	SHA1    string
	Meaning string // "release", "extend" or "acquire"
	Key     int    // 1-based KEYS index of the lock key; 0: 1
	Owner   int    // 1-based ARGV index of the owner value; 0: 1
	TTL     int    // 1-based ARGV index of the TTL in ms (extend, acquire); 0: 2
	// Granted is what the script answers when it acquired, extended or
	// released; Taken (acquire) or NotHeld (extend, release) what it
	// answers when it did not: OK, nil, an integer, true (1) or false
	// (nil). Required for acquire and extend; a release without them
	// answers 1/0.
	Granted, Taken, NotHeld string
}

// User is a named client identity limited to keys under Prefix ("" for
// all). Admin users may run the REDLOCK admin commands.
type User struct {
	Name     string
	Password string
	Prefix   string
	Admin    bool
}

// authRequired: a password or named users are configured.
func (o *options) authRequired() bool { return o.requirePass != "" || len(o.users) > 0 }
