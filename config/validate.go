package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
)

// Validate reports every setting that makes no sense, each naming its field.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: %s: "+format, append([]any{field}, args...)...))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "%q is not host:port: %v", c.Listen, err)
	}
	seen := map[string]int{}
	for i, b := range c.Backends {
		field := fmt.Sprintf("backends[%d]", i)
		switch {
		case b.Addr == "":
			bad(field, "empty address")
			continue
		case b.Network() == "tcp":
			if _, _, err := net.SplitHostPort(b.Addr); err != nil {
				bad(field, "%q is neither host:port nor an absolute socket path: %v", b.Addr, err)
			}
		}
		if j, dup := seen[b.Addr]; dup {
			bad(field, "%s duplicates backends[%d]: one Redis counted twice breaks the majority", b.Addr, j)
		}
		seen[b.Addr] = i
	}
	if len(c.Backends) == 0 && c.Embedded < 1 {
		bad("embedded", "%d: with no backends configured at least one embedded backend is needed", c.Embedded)
	}
	if host, _, err := net.SplitHostPort(c.Listen); err == nil && len(c.Backends) == 0 && !c.EmbeddedPublic && !loopback(host) {
		bad("backends", "none configured, so the in-memory embedded backends would serve locks on %s, beyond this machine. "+
			"Give the Redis masters with -backends, REDLOCK_BACKENDS or backends: in the config file "+
			"(e.g. REDLOCK_BACKENDS=10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379); "+
			"or listen on loopback (127.0.0.1) to try it out; or set embedded_public: true (-embedded-public) for a demo", c.Listen)
	}
	for _, p := range append(c.Settings.Problems(), c.Limits.Problems()...) { // the engine's and the server's own bounds
		bad(p.Setting, "%s", p.Problem)
	}
	if c.ShutdownGrace < 0 {
		bad("shutdown_grace", "%v must not be negative", c.ShutdownGrace)
	}
	if c.DefaultTTL > c.MaxTTL {
		bad("default_ttl", "%v exceeds max_ttl %v", c.DefaultTTL, c.MaxTTL)
	}
	if c.BoundLease > c.MaxTTL {
		bad("bound_lease", "%v exceeds max_ttl %v", c.BoundLease, c.MaxTTL)
	}
	if c.DefaultTTL > 0 && c.DefaultTTL <= c.MinValidity {
		bad("default_ttl", "%v must exceed min_validity %v", c.DefaultTTL, c.MinValidity)
	}
	names := map[string]bool{}
	for i, u := range c.Users {
		field := fmt.Sprintf("users[%d]", i)
		switch {
		case u.Name == "" || u.Name == "default":
			bad(field, "name %q: give each user its own name (the default user is requirepass's)", u.Name)
		case names[u.Name]:
			bad(field, "name %q is used twice", u.Name)
		case u.Password == "":
			bad(field, "user %q has no password", u.Name)
		}
		names[u.Name] = true
		for _, o := range c.Users[:i] {
			// A key belongs to exactly one user: prefixes may not nest.
			if u.Prefix != "" && o.Prefix != "" && (strings.HasPrefix(u.Prefix, o.Prefix) || strings.HasPrefix(o.Prefix, u.Prefix)) {
				bad(field, "prefix %q overlaps user %q's prefix %q: a key must belong to one user", u.Prefix, o.Name, o.Prefix)
			}
		}
	}
	for i, sc := range c.Scripts {
		field := fmt.Sprintf("scripts[%d]", i)
		if _, err := hex.DecodeString(sc.SHA1); err != nil || len(sc.SHA1) != 40 {
			bad(field, "sha1 %q is not 40 hex digits", sc.SHA1)
		}
		if problem := sc.Proxy().Problem(); problem != "" {
			bad(field, "%s", problem)
		}
		if sc.Key < 0 || sc.Owner < 0 || sc.TTL < 0 {
			bad(field, "positions are 1-based (0 for the default)")
		}
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		bad("tls_cert", "tls_cert and tls_key go together")
	}
	if c.TLSClientCA != "" && c.TLSCert == "" {
		bad("tls_client_ca", "client certificates need the listener to speak TLS: set tls_cert and tls_key")
	}
	if (c.BackendTLSCert == "") != (c.BackendTLSKey == "") {
		bad("backend_tls_cert", "backend_tls_cert and backend_tls_key go together")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("log_format", "%q: want text or json", c.LogFormat)
	}
	for _, f := range []struct{ field, addr string }{{"http_listen", c.HTTPListen}, {"pprof_listen", c.PprofListen}} {
		if _, _, err := net.SplitHostPort(f.addr); f.addr != "" && err != nil {
			bad(f.field, "%q is not host:port: %v", f.addr, err)
		}
	}
	return errors.Join(errs...)
}

// loopback tells whether a listen host is reachable from this machine only.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Warnings lists settings that are valid but unwise.
func (c Config) Warnings() []string {
	var w []string
	n := len(c.Backends)
	if n == 0 {
		n = c.Embedded
	}
	if n%2 == 0 {
		w = append(w, fmt.Sprintf("%d backends: an even count tolerates no more failures than %d would (quorum %d); use an odd number", n, n-1, n/2+1))
	}
	if len(c.Backends) == 0 && c.EmbeddedPublic {
		w = append(w, "embedded_public: in-memory locks are served beyond this machine; they vanish with this process and every replica grants its own (a demo, never a lock service)")
	}
	if !c.Quarantine && len(c.Backends) > 0 {
		w = append(w, "quarantine is off: a backend that restarts empty can hand a held lock to a second owner (unsafe)")
	}
	if len(c.Backends) > 0 && len(c.Backends) < 3 {
		w = append(w, fmt.Sprintf("%d backends: no failure can be tolerated; Redlock needs at least 3 independent masters", len(c.Backends)))
	}
	return w
}
