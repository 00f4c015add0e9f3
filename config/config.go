package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/redlock-proxy/redlock-proxy/proxy"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Config is everything redlock-proxy can be told. Default() fills every
// field; Load layers a YAML file, REDLOCK_* environment variables and flags
// on top, in rising priority.
type Config struct {
	// Listen is the client address, host:port. Default "127.0.0.1:6380".
	Listen string `yaml:"listen"`
	// Backends are the independent Redis masters. Default none: the proxy
	// then starts Embedded in-memory backends, for trying it out.
	Backends []Backend `yaml:"backends"`
	// Embedded is how many in-memory backends run when Backends is empty. Default 5.
	Embedded int `yaml:"embedded"`
	// EmbeddedPublic lets the embedded backends serve a listen address
	// that is not loopback. Default false: with no backends configured, a
	// listener beyond this machine (a typo'd variable, an image started
	// without backends) is refused.
	EmbeddedPublic bool `yaml:"embedded_public"`
	// Settings are the engine's: drift_factor, node_timeout,
	// timeout_factor, min_validity, max_ttl, quarantine and
	// health_interval, with their defaults and bounds (quorum.Settings).
	quorum.Settings `yaml:",inline"`
	// Limits are the client-facing ones: default_ttl,
	// allow_force_release, max_clients, max_request_size, max_args,
	// write_timeout and idle_timeout, with their defaults and bounds
	// (proxy.Limits).
	proxy.Limits `yaml:",inline"`
	// TLSCert and TLSKey, when set, make the client listener speak TLS
	// (PEM files). Default "" (plain TCP).
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// TLSClientCA, when set, requires clients to present a certificate
	// signed by this CA (PEM). Default "".
	TLSClientCA string `yaml:"tls_client_ca"`
	// BackendTLSCA verifies backends that use TLS (rediss:// or tls: true);
	// default "": the system roots.
	BackendTLSCA string `yaml:"backend_tls_ca"`
	// BackendTLSCert and BackendTLSKey are the client certificate shown to
	// TLS backends, when they require one. Default "".
	BackendTLSCert string `yaml:"backend_tls_cert"`
	BackendTLSKey  string `yaml:"backend_tls_key"`
	// BackendTLSServerName overrides the name checked in backend
	// certificates. Default "": the backend's host.
	BackendTLSServerName string `yaml:"backend_tls_server_name"`
	// RequirePass, when set, is the password clients must AUTH with. Default "".
	RequirePass string `yaml:"requirepass"`
	// Users are named clients (AUTH name password), each limited to keys
	// starting with its prefix; admins may list and force-unlock locks.
	// YAML only. Default none.
	Users []User `yaml:"users"`
	// Scripts registers lock scripts by SHA1 with their meaning and the
	// KEYS/ARGV positions of key, owner and TTL. YAML only. Default none.
	Scripts []Script `yaml:"scripts"`
	// HTTPListen, when set, serves /metrics (Prometheus), /healthz,
	// /readyz and the admin status page (/status) on this host:port.
	// Default "" (off).
	HTTPListen string `yaml:"http_listen"`
	// LogFormat is "text" or "json". Default "text".
	LogFormat string `yaml:"log_format"`
	// LogValues lets logs name lock keys and owner values (rollback
	// failures). Default false: they can be secrets.
	LogValues bool `yaml:"log_values"`
	// PprofListen, when set, serves net/http/pprof on this host:port, for
	// profiling. Default "" (off). Keep it on loopback: it exposes internals.
	PprofListen string `yaml:"pprof_listen"`
	// ShutdownGrace is how long in-flight rounds may finish on SIGINT/SIGTERM. Default 10s.
	ShutdownGrace time.Duration `yaml:"shutdown_grace"`
}

// User is a named client of the proxy.
type User struct {
	Name     string `yaml:"name"`
	Password string `yaml:"password"`
	// Prefix limits the user to keys starting with it; "" allows all keys.
	Prefix string `yaml:"prefix"`
	// Admin allows REDLOCK LOCKS and REDLOCK FORCEUNLOCK.
	Admin bool `yaml:"admin"`
}

// Script is an operator-registered lock script.
type Script struct {
	SHA1 string `yaml:"sha1"`
	// Meaning is release, extend or acquire.
	Meaning string `yaml:"meaning"`
	// Key is the 1-based KEYS index of the lock key; 0 means 1.
	Key int `yaml:"key"`
	// Owner is the 1-based ARGV index of the owner value; 0 means 1.
	Owner int `yaml:"owner"`
	// TTL is the 1-based ARGV index of the TTL in ms (extend, acquire); 0 means 2.
	TTL int `yaml:"ttl"`
	// Granted, Taken (acquire) and NotHeld (extend, release) are the
	// script's reply convention: what it answers when it acquired,
	// extended or released, and when it did not. Each is OK, nil, an
	// integer, true or false; the proxy answers in them. Required for
	// acquire and extend; a release without them answers 1/0.
	Granted string `yaml:"granted"`
	Taken   string `yaml:"taken"`
	NotHeld string `yaml:"not_held"`
}

// Proxy is the script as the proxy registers it.
func (s Script) Proxy() proxy.Script {
	return proxy.Script{SHA1: s.SHA1, Meaning: s.Meaning, Key: s.Key, Owner: s.Owner, TTL: s.TTL,
		Granted: s.Granted, Taken: s.Taken, NotHeld: s.NotHeld}
}

// Backend is one Redis master.
type Backend struct {
	// Addr is host:port, or a unix socket path.
	Addr     string `yaml:"addr"`
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// TLS connects with TLS (rediss:// in the short form).
	TLS bool `yaml:"tls"`
}

// Network is "unix" for a socket path, else "tcp".
func (b Backend) Network() string {
	if strings.HasPrefix(b.Addr, "/") {
		return "unix"
	}
	return "tcp"
}

// Default returns the configuration used where nothing else is said.
func Default() Config {
	return Config{
		Listen:        "127.0.0.1:6380",
		Embedded:      5,
		Settings:      quorum.DefaultSettings(),
		Limits:        proxy.DefaultLimits(),
		ShutdownGrace: 10 * time.Second,
		LogFormat:     "text",
	}
}

// ParseBackend reads one backend as written in -backends or REDLOCK_BACKENDS:
// "host:port", "/path/to.sock", "redis://[user:pass@]host:port",
// "rediss://..." (TLS) or "unix://[user:pass@]/path/to.sock".
func ParseBackend(s string) (Backend, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		return Backend{Addr: s}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return Backend{}, err
	}
	var b Backend
	switch u.Scheme {
	case "redis", "rediss":
		b.Addr, b.TLS = u.Host, u.Scheme == "rediss"
	case "unix":
		b.Addr = u.Path
	default:
		return Backend{}, fmt.Errorf("scheme %q: want redis://, rediss:// or unix://", u.Scheme)
	}
	if u.User != nil {
		b.Username = u.User.Username()
		b.Password, _ = u.User.Password()
	}
	return b, nil
}

// UnmarshalYAML accepts a backend as a mapping or as a ParseBackend string.
func (b *Backend) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		pb, err := ParseBackend(n.Value)
		*b = pb
		return err
	}
	type plain Backend
	return n.Decode((*plain)(b))
}

func (b Backend) String() string {
	s := b.Addr
	if b.TLS {
		s = "rediss://" + s
	}
	if b.Password != "" || b.Username != "" {
		s += " (with credentials)"
	}
	return s
}
