package quorum

import (
	"log/slog"
	"time"
)

// Option configures an Engine. Defaults are DefaultSettings'; New checks
// the result with Settings.Validate.
type Option func(*options)

type options struct {
	Settings
	observer  func(addr string, d time.Duration, err error)
	contended func(key string)
	logValues bool
	logger    *slog.Logger
}

func defaultOptions() options {
	return options{Settings: DefaultSettings(), logger: slog.Default()}
}

// WithDriftFactor sets the assumed bound on clock-rate difference between the
// proxy and any backend, as a fraction. Default 0.01.
func WithDriftFactor(f float64) Option { return func(o *options) { o.DriftFactor = f } }

// WithNodeTimeout bounds how long a round waits for one node. Default 250ms.
func WithNodeTimeout(d time.Duration) Option { return func(o *options) { o.NodeTimeout = d } }

// WithTimeoutFactor further bounds a lock round's per-node wait to this
// fraction of the lock TTL, so a short lock is not spent waiting. Default 0.05.
func WithTimeoutFactor(f float64) Option { return func(o *options) { o.TimeoutFactor = f } }

// WithMinValidity is the least time a caller must have left on its lock when
// an acquire or extend succeeds; less and the round fails. Default 10ms.
func WithMinValidity(d time.Duration) Option { return func(o *options) { o.MinValidity = d } }

// WithMaxTTL is the longest TTL a lock may ask for. Default 10m.
func WithMaxTTL(d time.Duration) Option { return func(o *options) { o.MaxTTL = d } }

// WithLockDelay sets the lock-delay of Acquire's locks (default 0) and of
// AcquireFenced's (default 5s): see Settings.LockDelay.
func WithLockDelay(plain, fenced time.Duration) Option {
	return func(o *options) { o.LockDelay, o.NativeLockDelay = plain, fenced }
}

// WithLogger sets where rollback failures are logged. Default slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithQuarantine switches restart quarantine. Default true. Off, a backend
// that restarted empty counts toward a quorum at once, which can let a
// second owner take a lock that is still held: unsafe.
func WithQuarantine(on bool) Option { return func(o *options) { o.Quarantine = on } }

// WithHealthInterval sets how often each backend's run_id and reachability
// are checked. Default 1s.
func WithHealthInterval(d time.Duration) Option { return func(o *options) { o.HealthInterval = d } }

// WithObserver has f called with every backend answer: the backend, the
// time from send to answer, and the error if any. It runs on the lock path:
// keep it cheap. Default none.
func WithObserver(f func(addr string, d time.Duration, err error)) Option {
	return func(o *options) { o.observer = f }
}

// WithContention has f called with the key of every acquire round that
// found the lock taken (the status page's hottest keys). It runs on the
// lock path: keep it cheap. Default none.
func WithContention(f func(key string)) Option {
	return func(o *options) { o.contended = f }
}

// WithLogValues lets log lines name lock keys and owner values. Default
// false: owner values can be secrets.
func WithLogValues(on bool) Option { return func(o *options) { o.logValues = on } }

// WithSettings replaces every setting at once (the proxy's configuration
// carries a whole Settings).
func WithSettings(s Settings) Option { return func(o *options) { o.Settings = s } }
