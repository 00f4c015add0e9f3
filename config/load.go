package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// setting describes one Config field once, for flags, environment and docs.
type setting struct {
	key   string // YAML key; the flag is key with '-', the env REDLOCK_KEY
	usage string
	field func(*Config) any // pointer to the field
}

var settings = []setting{
	{"listen", "client address, host:port", func(c *Config) any { return &c.Listen }},
	{"backends", "comma-separated Redis masters: host:port, /socket/path, redis://[user:pass@]host:port or unix://[user:pass@]/path; none starts embedded in-memory backends", func(c *Config) any { return &c.Backends }},
	{"embedded", "in-memory backends started when no backends are given (for trying it out only: they serve a loopback listen address only, and /readyz never says ready)", func(c *Config) any { return &c.Embedded }},
	{"embedded_public", "let the embedded backends serve a listen address that is not loopback (a demo across machines; every replica then grants locks of its own)", func(c *Config) any { return &c.EmbeddedPublic }},
	{"drift_factor", "bound on clock-rate difference between proxy and backends; TTLs are padded by it", func(c *Config) any { return &c.DriftFactor }},
	{"node_timeout", "longest wait for one backend in a round", func(c *Config) any { return &c.NodeTimeout }},
	{"timeout_factor", "a lock round waits for a backend at most this fraction of the lock TTL", func(c *Config) any { return &c.TimeoutFactor }},
	{"min_validity", "least time a client must have left when a lock is granted or extended", func(c *Config) any { return &c.MinValidity }},
	{"max_ttl", "longest lock TTL a client may ask for", func(c *Config) any { return &c.MaxTTL }},
	{"quarantine", "keep a backend that restarted (or is younger than max_ttl at start) out of acquire/extend quorums for max_ttl; false is UNSAFE", func(c *Config) any { return &c.Quarantine }},
	{"health_interval", "how often each backend's run_id and reachability are checked", func(c *Config) any { return &c.HealthInterval }},
	{"lock_delay", "a SET NX PX (or client library lock script, Redisson's included) lock that expired unreleased stays unavailable this long; a released one is free at once; 0: off, as on one Redis; else at least 10ms", func(c *Config) any { return &c.LockDelay }},
	{"native_lock_delay", "the same for LOCK.ACQUIRE's locks (0 or at least 10ms)", func(c *Config) any { return &c.NativeLockDelay }},
	{"default_ttl", "TTL for SET NX without one, the old behaviour; 0 (default): such a SET takes a connection-bound lock (PTTL -1, renewed while the connection is open, released when it closes)", func(c *Config) any { return &c.DefaultTTL }},
	{"bound_lease", "lease of a connection-bound lock (SET NX without a TTL): renewed every session_tick while its connection is open; 0: 10s, or max_ttl when shorter; else at least three ticks, at most max_ttl", func(c *Config) any { return &c.BoundLease }},
	{"allow_force_release", "let DEL/UNLINK delete a lock whoever holds it", func(c *Config) any { return &c.AllowForceRelease }},
	{"tls_cert", "PEM certificate: the client listener speaks TLS (with tls_key)", func(c *Config) any { return &c.TLSCert }},
	{"tls_key", "PEM private key for tls_cert", func(c *Config) any { return &c.TLSKey }},
	{"tls_client_ca", "PEM CA: clients must present a certificate it signed", func(c *Config) any { return &c.TLSClientCA }},
	{"backend_tls_ca", "PEM CA that verifies TLS backends (rediss://); empty: system roots", func(c *Config) any { return &c.BackendTLSCA }},
	{"backend_tls_cert", "PEM client certificate shown to TLS backends (with backend_tls_key)", func(c *Config) any { return &c.BackendTLSCert }},
	{"backend_tls_key", "PEM private key for backend_tls_cert", func(c *Config) any { return &c.BackendTLSKey }},
	{"backend_tls_server_name", "name checked in backend certificates; empty: the backend's host", func(c *Config) any { return &c.BackendTLSServerName }},
	{"requirepass", "password clients must AUTH with; empty: none", func(c *Config) any { return &c.RequirePass }},
	{"max_clients", "most client connections at once", func(c *Config) any { return &c.MaxClients }},
	{"max_request_size", "largest request a client may send, in bytes", func(c *Config) any { return &c.MaxRequestSize }},
	{"max_args", "most arguments one command may have", func(c *Config) any { return &c.MaxArgs }},
	{"write_timeout", "close a client connection whose replies cannot be written this long (it stopped reading)", func(c *Config) any { return &c.WriteTimeout }},
	{"idle_timeout", "close client connections idle this long (never one subscribed or holding session or connection-bound locks); 0: never", func(c *Config) any { return &c.IdleTimeout }},
	{"session_tick", "how often session locks (LOCK.ACQUIRE ... SESSION) are renewed, in one batched round; their TTL must be at least three ticks", func(c *Config) any { return &c.SessionTick }},
	{"max_subscriptions", "most channels and patterns one connection may subscribe to; 0: no limit", func(c *Config) any { return &c.MaxSubscriptions }},
	{"max_patterns_per_user", "most patterns (PSUBSCRIBE) all of one user's connections may hold; 0: no limit", func(c *Config) any { return &c.MaxPatternsPerUser }},
	{"max_pattern_bytes_per_user", "most bytes of patterns all of one user's connections may hold; 0: no limit", func(c *Config) any { return &c.MaxPatternBytesPerUser }},
	{"max_session_locks_per_client", "most session locks (LOCK.ACQUIRE ... SESSION) one connection may hold; 0: no limit", func(c *Config) any { return &c.MaxSessionLocksPerClient }},
	{"max_session_locks_per_user", "most session locks all of one user's connections may hold; 0: no limit", func(c *Config) any { return &c.MaxSessionLocksPerUser }},
	{"max_waiters_per_client", "most LOCK.ACQUIRE ... WAIT requests one connection may have parked at once; 0: no limit", func(c *Config) any { return &c.MaxWaitersPerClient }},
	{"max_waiters_per_user", "most LOCK.ACQUIRE ... WAIT requests all of one user's connections may have parked at once; 0: no limit", func(c *Config) any { return &c.MaxWaitersPerUser }},
	{"limit_refusals_per_user", "refusals a second for the limits above (subscriptions, patterns, session locks, waiters) one user (without users: one connection) may get before its connections wait up to 1s before each read; 0: no back-off", func(c *Config) any { return &c.LimitRefusalsPerUser }},
	{"max_wait", "longest WAIT a LOCK.ACQUIRE may ask for; 0: a day", func(c *Config) any { return &c.MaxWait }},
	{"http_listen", "serve /metrics, /healthz, /readyz and the /status page on this host:port; empty: off", func(c *Config) any { return &c.HTTPListen }},
	{"log_format", "log format: text or json", func(c *Config) any { return &c.LogFormat }},
	{"log_values", "let logs name lock keys and owner values (they can be secrets)", func(c *Config) any { return &c.LogValues }},
	{"pprof_listen", "serve Go's pprof profiles on this host:port; empty: off (keep it on loopback)", func(c *Config) any { return &c.PprofListen }},
	{"shutdown_grace", "on SIGINT/SIGTERM, how long in-flight rounds may finish", func(c *Config) any { return &c.ShutdownGrace }},
}

func flagName(key string) string { return strings.ReplaceAll(key, "_", "-") }
func envName(key string) string  { return "REDLOCK_" + strings.ToUpper(key) }

// Load builds the configuration from, in rising priority: Default(), the YAML
// file named by -config (or REDLOCK_CONFIG), REDLOCK_* environment variables
// (read through getenv), and the flags in args. It returns flag.ErrHelp after
// printing the usage to out when args ask for it.
func Load(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	fs := flag.NewFlagSet("redlock-proxy", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { PrintUsage(out) }
	configPath := fs.String("config", getenv("REDLOCK_CONFIG"), "")
	flagged := map[string]string{}
	for _, s := range settings {
		fs.Func(flagName(s.key), s.usage, func(v string) error { flagged[s.key] = v; return nil })
	}
	var removedErr error
	for key, why := range removed {
		fs.Func(flagName(key), why, func(string) error { removedErr = removedError("-"+flagName(key), key); return nil })
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if removedErr != nil {
		return Config{}, removedErr
	}
	if err := removedInEnv(getenv); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("config: unexpected argument %q (settings are flags: -h lists them)", fs.Arg(0))
	}

	cfg := Default()
	if *configPath != "" {
		if err := cfg.loadFile(*configPath); err != nil {
			return Config{}, err
		}
	}
	for _, s := range settings {
		if v := getenv(envName(s.key)); v != "" {
			if err := set(s.field(&cfg), v); err != nil {
				return Config{}, redact(fmt.Errorf("config: %s=%s: %w", envName(s.key), shown(s.key, v), err))
			}
		}
	}
	for _, s := range settings {
		if v, ok := flagged[s.key]; ok {
			if err := set(s.field(&cfg), v); err != nil {
				return Config{}, redact(fmt.Errorf("config: -%s %s: %w", flagName(s.key), shown(s.key, v), err))
			}
		}
	}
	return cfg, cfg.Validate()
}

func (c *Config) loadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := removedInYAML(path, data); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return redact(fmt.Errorf("config: %s: %s", path, yamlProblem(err)))
	}
	return nil
}

// set parses v into the field p points to.
func set(p any, v string) error {
	var err error
	switch p := p.(type) {
	case *string:
		*p = v
	case *int:
		if *p, err = strconv.Atoi(v); err != nil {
			return errors.New("want a whole number")
		}
	case *float64:
		if *p, err = strconv.ParseFloat(v, 64); err != nil {
			return errors.New("want a number such as 0.01")
		}
	case *bool:
		if *p, err = strconv.ParseBool(v); err != nil {
			return errors.New("want true or false")
		}
	case *time.Duration:
		if *p, err = time.ParseDuration(v); err != nil {
			return errors.New("want a duration such as 250ms, 10s or 5m")
		}
	case *[]Backend:
		*p = nil
		for _, s := range strings.Split(v, ",") {
			if strings.TrimSpace(s) == "" {
				continue
			}
			b, perr := ParseBackend(s)
			if perr != nil {
				return perr
			}
			*p = append(*p, b)
		}
	default:
		panic(fmt.Sprintf("config: no parser for %T", p))
	}
	return err
}

// format renders a field's value the way set reads it.
func format(p any) string {
	switch p := p.(type) {
	case *string:
		return strconv.Quote(*p)
	case *[]Backend:
		parts := make([]string, len(*p))
		for i, b := range *p {
			parts[i] = b.String()
		}
		return strconv.Quote(strings.Join(parts, ","))
	case *time.Duration:
		return p.String()
	case *int:
		return strconv.Itoa(*p)
	case *float64:
		return strconv.FormatFloat(*p, 'g', -1, 64)
	case *bool:
		return strconv.FormatBool(*p)
	}
	panic(fmt.Sprintf("config: no formatter for %T", p))
}

// PrintUsage documents every setting with its flag, environment variable,
// YAML key and default.
func PrintUsage(w io.Writer) {
	d := Default()
	fmt.Fprintf(w, "Usage: redlock-proxy [flags]\n\n")
	fmt.Fprintf(w, "A Redis-protocol endpoint whose lock commands are Redlock rounds across independent Redis masters.\n")
	fmt.Fprintf(w, "Settings come from defaults, then the YAML file, then REDLOCK_* environment variables, then flags.\n\n")
	fmt.Fprintf(w, "  -config FILE\n    \tYAML file with any of the settings below, by their yaml key (env REDLOCK_CONFIG)\n")
	for _, s := range settings {
		fmt.Fprintf(w, "  -%s\n    \t%s (default %s; env %s; yaml %s)\n", flagName(s.key), s.usage, format(s.field(&d)), envName(s.key), s.key)
	}
	fmt.Fprintf(w, "\nredlock-proxy bootstrap [flags]\n    \tmark the backends of a brand-new deployment once, so that replicas count them at once; refuses if any was marked before or seen by a replica (README, Restart quarantine)\n")
	fmt.Fprintf(w, "\nredlock-proxy -probe URL\n    \tGET URL and exit 0 on 200 OK, else 1: the container image's health check (it has no curl)\n")
	fmt.Fprintf(w, "redlock-proxy -version\n    \tprint the version and commit, then exit\n")
}

// Doc is one setting as the README's table shows it.
type Doc struct{ Key, Flag, Env, Default, Usage string }

// Docs lists every setting with its default.
func Docs() []Doc {
	d := Default()
	out := make([]Doc, len(settings))
	for i, s := range settings {
		out[i] = Doc{s.key, "-" + flagName(s.key), envName(s.key), format(s.field(&d)), s.usage}
	}
	return out
}
