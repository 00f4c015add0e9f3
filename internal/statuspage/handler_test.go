package statuspage_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/statuspage"
	"github.com/redlock-proxy/redlock-proxy/proxy"
)

// page is the status page over the harness's engine and a proxy server
// configured with requirepass "secret", an admin user "ops" and a plain
// user "app"; its log (the audit line) goes to log.
type page struct {
	h       *harness.Harness
	handler http.Handler
	log     *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newPage(t *testing.T, auth bool) *page {
	t.Helper()
	h := harness.New(t, 3, nil)
	p := &page{h: h, log: &syncBuffer{}}
	logger := slog.New(slog.NewTextHandler(p.log, nil))
	opts := []proxy.Option{proxy.WithLogger(logger)}
	if auth {
		opts = append(opts, proxy.WithRequirePass("secret"), proxy.WithUsers(
			proxy.User{Name: "ops", Password: "ops-pass", Admin: true},
			proxy.User{Name: "app", Password: "app-pass", Prefix: "app:"},
		))
	}
	server := proxy.New(h.App.Engine, opts...)
	t.Cleanup(func() { _ = server.Close() })
	p.handler = statuspage.New(server, h.App.Engine, statuspage.NewContention(16), logger)
	return p
}

// lock takes key for owner through the harness's (unauthenticated) proxy.
func (p *page) lock(t *testing.T, key, owner string) {
	t.Helper()
	if err := p.h.Client().Do(t.Context(), "LOCK.ACQUIRE", key, owner, 60000).Err(); err != nil {
		t.Fatalf("LOCK.ACQUIRE %q: %v", key, err)
	}
}

// do runs one request as user (nil: no credentials) and returns the answer.
func (p *page) do(t *testing.T, method, target string, form url.Values, user []string, hdr ...string) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, target, body)
	r = r.WithContext(t.Context())
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if user != nil {
		r.SetBasicAuth(user[0], user[1])
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	p.handler.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

var (
	admin    = []string{"ops", "ops-pass"}
	defUser  = []string{"", "secret"}
	nonAdmin = []string{"app", "app-pass"}
	tokenRe  = regexp.MustCompile(`name="token" value="([0-9a-f]+)"`)
)

// token reads the form token off key's confirmation page.
func (p *page) token(t *testing.T, key string, user []string) string {
	t.Helper()
	code, body := p.do(t, "GET", "/status/unlock?key="+url.QueryEscape(key), nil, user)
	m := tokenRe.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("confirmation page: %d, no token in %q", code, body)
	}
	return m[1]
}

func TestAuthNeedsAnAdmin(t *testing.T) {
	p := newPage(t, true)
	p.lock(t, "app:job", "worker-1")
	for _, tc := range []struct {
		name   string
		user   []string
		method string
		target string
		want   int
	}{
		{"no credentials", nil, "GET", "/status", http.StatusUnauthorized},
		{"wrong password", []string{"ops", "nope"}, "GET", "/status", http.StatusUnauthorized},
		{"default user, wrong password", []string{"", "nope"}, "GET", "/status", http.StatusUnauthorized},
		{"unknown user", []string{"eve", "ops-pass"}, "GET", "/status", http.StatusUnauthorized},
		{"non-admin user", nonAdmin, "GET", "/status", http.StatusForbidden},
		{"non-admin confirmation page", nonAdmin, "GET", "/status/unlock?key=app:job", http.StatusForbidden},
		{"non-admin force-unlock", nonAdmin, "POST", "/status/unlock", http.StatusForbidden},
		{"admin user", admin, "GET", "/status", http.StatusOK},
		{"default user (requirepass)", defUser, "GET", "/status", http.StatusOK},
		{"default user by name", []string{"default", "secret"}, "GET", "/status", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var form url.Values
			if tc.method == "POST" {
				form = url.Values{"key": {"app:job"}, "confirm": {"yes"}, "token": {p.token(t, "app:job", admin)}}
			}
			code, body := p.do(t, tc.method, tc.target, form, tc.user)
			if code != tc.want {
				t.Fatalf("%s %s = %d %q; want %d", tc.method, tc.target, code, body, tc.want)
			}
			if code == http.StatusUnauthorized && !strings.Contains(body, "401") {
				t.Errorf("401 body %q", body)
			}
			if code == http.StatusOK && !strings.Contains(body, "app:job") {
				t.Errorf("the admin's page does not list the lock app:job")
			}
			if code != http.StatusOK && strings.Contains(body, "app:job") {
				t.Errorf("a refused request saw the lock: %q", body)
			}
		})
	}
	if n := p.h.Holders("app:job", "worker-1"); n != 3 {
		t.Fatalf("the non-admin's force-unlock touched the lock: %d/3 backends hold it", n)
	}
	if strings.Contains(p.log.String(), "audit: force unlock") {
		t.Fatalf("a refused force-unlock wrote an audit line:\n%s", p.log.String())
	}
}

func TestNoAuthConfiguredPageIsOpen(t *testing.T) {
	p := newPage(t, false)
	p.lock(t, "job:1", "w")
	code, body := p.do(t, "GET", "/status", nil, nil)
	if code != http.StatusOK || !strings.Contains(body, "job:1") {
		t.Fatalf("GET /status without auth configured = %d; want 200 listing job:1", code)
	}
	for _, h := range []string{"<script", "http://", "https://", "<link", "@import", "url("} {
		if strings.Contains(body, h) {
			t.Errorf("the page has %q: it must need no external asset nor script", h)
		}
	}
}

func TestForceUnlockNeedsTokenSameOriginAndConfirmation(t *testing.T) {
	p := newPage(t, true)
	p.lock(t, "job:7", "worker-7")
	tok := p.token(t, "job:7", admin)
	form := func(token, confirm string) url.Values {
		return url.Values{"key": {"job:7"}, "token": {token}, "confirm": {confirm}}
	}
	for _, tc := range []struct {
		name string
		form url.Values
		user []string
		hdr  []string
		want int
	}{
		{"no token", url.Values{"key": {"job:7"}, "confirm": {"yes"}}, admin, nil, http.StatusForbidden},
		{"wrong token", form(strings.Repeat("0", 64), "yes"), admin, nil, http.StatusForbidden},
		{"another admin's token", form(tok, "yes"), defUser, nil, http.StatusForbidden},
		{"cross-site (Sec-Fetch-Site)", form(tok, "yes"), admin, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"cross-origin (Origin)", form(tok, "yes"), admin, []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"not confirmed", form(tok, ""), admin, nil, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, body := p.do(t, "POST", "/status/unlock", tc.form, tc.user, tc.hdr...); code != tc.want {
				t.Fatalf("POST = %d %q; want %d", code, body, tc.want)
			}
			if n := p.h.Holders("job:7", "worker-7"); n != 3 {
				t.Fatalf("a refused POST force-unlocked: %d/3 backends hold the lock", n)
			}
		})
	}
	if strings.Contains(p.log.String(), "audit: force unlock") {
		t.Fatalf("a refused force-unlock wrote an audit line:\n%s", p.log.String())
	}
	code, body := p.do(t, "POST", "/status/unlock", form(tok, "yes"), admin, "Sec-Fetch-Site", "same-origin")
	if code != http.StatusOK || !strings.Contains(body, "Unlocked") {
		t.Fatalf("confirmed same-origin POST = %d %q; want 200 Unlocked", code, body)
	}
	if n := p.h.Holders("job:7", "worker-7"); n != 0 {
		t.Fatalf("after the force-unlock %d/3 backends still hold the lock", n)
	}
	audit := p.log.String()
	for _, want := range []string{`msg="audit: force unlock"`, "user=ops", "existed=true", "key_sha256="} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit log lacks %q:\n%s", want, audit)
		}
	}
}

func TestKeyNamesAreEscaped(t *testing.T) {
	p := newPage(t, false)
	const evilKey = `<script>alert("k")</script>`
	const evilOwner = `"><img src=x onerror=alert(1)>`
	p.lock(t, evilKey, evilOwner)
	pages := map[string]string{
		"status":       "/status",
		"filtered":     "/status?prefix=" + url.QueryEscape("<script>"),
		"confirmation": "/status/unlock?key=" + url.QueryEscape(evilKey),
	}
	for name, target := range pages {
		t.Run(name, func(t *testing.T) {
			code, body := p.do(t, "GET", target, nil, nil)
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d", target, code)
			}
			if strings.Contains(body, "<script") || strings.Contains(body, "<img") {
				t.Fatalf("the key or owner reached the HTML unescaped:\n%s", body)
			}
			if !strings.Contains(body, "&lt;script&gt;") {
				t.Fatalf("the escaped key is not on the page:\n%s", body)
			}
		})
	}
	// Its force-unlock, by the escaped form's value, reaches the real key.
	tok := p.token(t, evilKey, []string{"", ""})
	code, _ := p.do(t, "POST", "/status/unlock", url.Values{"key": {evilKey}, "token": {tok}, "confirm": {"yes"}}, nil)
	if code != http.StatusOK || p.h.Holders(evilKey, evilOwner) != 0 {
		t.Fatalf("force-unlock of the odd key: %d, %d/3 still hold it", code, p.h.Holders(evilKey, evilOwner))
	}
}

// A request without credentials is a prompt (401), not a failed AUTH: it is
// neither throttled nor logged; a wrong password is, as AUTH's are.
func TestPromptIsNotAFailedAuth(t *testing.T) {
	p := newPage(t, true)
	for range 20 {
		if code, _ := p.do(t, "GET", "/status", nil, nil); code != http.StatusUnauthorized {
			t.Fatalf("no credentials = %d; want 401", code)
		}
	}
	if strings.Contains(p.log.String(), "AUTH failed") {
		t.Fatalf("a credential-less request was logged as a failed AUTH:\n%s", p.log.String())
	}
	if code, _ := p.do(t, "GET", "/status", nil, []string{"ops", "guess"}); code != http.StatusUnauthorized {
		t.Fatalf("wrong password = %d; want 401", code)
	}
	if !strings.Contains(p.log.String(), "AUTH failed") {
		t.Fatalf("a wrong password was not logged as a failed AUTH:\n%s", p.log.String())
	}
}

// The engine's own keys cannot be force-unlocked from the page either.
func TestInternalKeysRefused(t *testing.T) {
	p := newPage(t, false)
	tok := p.token(t, "x", nil)
	code, _ := p.do(t, "POST", "/status/unlock", url.Values{"key": {"__redlock:token"}, "token": {tok}, "confirm": {"yes"}}, nil)
	if code != http.StatusForbidden || strings.Contains(p.log.String(), "audit") {
		t.Fatalf("force-unlock of __redlock:token = %d (log %q); want 403 and no audit line", code, p.log.String())
	}
}
