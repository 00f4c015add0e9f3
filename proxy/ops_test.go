package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestForceUnlockAuditNamesTheKey: the audit line says which key an admin
// force-unlocked: by its SHA-256 (first 16 hex digits, which an operator can
// compute from a suspected key) unless log_values lets it show the key.
func TestForceUnlockAuditNamesTheKey(t *testing.T) {
	const key = "secret:customer-42"
	sum := sha256.Sum256([]byte(key))
	fingerprint := "key_sha256=" + hex.EncodeToString(sum[:8])
	for _, logValues := range []bool{false, true} {
		var out lockedBuffer
		_, addr := serve(t, WithLogger(slog.New(slog.NewTextHandler(&out, nil))), WithLogValues(logValues))
		c := redis.NewClient(&redis.Options{Addr: addr})
		if err := c.Do(t.Context(), "REDLOCK", "FORCEUNLOCK", key).Err(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		var line string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "audit: force unlock") {
				line = l
			}
		}
		switch {
		case !strings.Contains(line, fingerprint):
			t.Errorf("log_values %v: the audit line %q does not name the key by %s", logValues, line, fingerprint)
		case strings.Contains(line, key) != logValues:
			t.Errorf("log_values %v: the audit line %q shows the key: %v", logValues, line, !logValues)
		}
	}
}

// TestInfoNamesTheProxyVersion: INFO server keeps redis_version for clients
// that check it and adds the proxy's own version and commit.
func TestInfoNamesTheProxyVersion(t *testing.T) {
	_, addr := serve(t, WithVersion("v1.2.3", "0123abcd"))
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(t.Context(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"redis_version:7.0.15\r\n", "redlock_proxy_version:v1.2.3\r\n", "redlock_proxy_git_sha1:0123abcd\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO server lacks %q:\n%s", want, info)
		}
	}
}
