package statuspage

import (
	"context"
	"crypto/rand"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/redlock-proxy/redlock-proxy/proxy"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

//go:embed templates/*.html
var templateFiles embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"ms": func(d time.Duration) int64 { return d.Milliseconds() },
	"us": func(d time.Duration) int64 { return d.Microseconds() },
}).ParseFS(templateFiles, "templates/*.html"))

// Handler serves the status page: GET /status, GET /status/unlock?key=K
// (the confirmation page) and POST /status/unlock (the force-unlock).
type Handler struct {
	server     *proxy.Server
	engine     *quorum.Engine
	contention *Contention
	logger     *slog.Logger
	secret     [32]byte
	csrf       *http.CrossOriginProtection
	mux        *http.ServeMux
}

// New is the page over a proxy server and its engine; contention may be
// nil (no hottest keys shown).
func New(server *proxy.Server, engine *quorum.Engine, contention *Contention, logger *slog.Logger) *Handler {
	h := &Handler{server: server, engine: engine, contention: contention, logger: logger, csrf: http.NewCrossOriginProtection()}
	_, _ = rand.Read(h.secret[:]) // never fails (crypto/rand panics rather)
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET /status", h.status)
	h.mux.HandleFunc("GET /status/unlock", h.confirm)
	h.mux.Handle("POST /status/unlock", h.csrf.Handler(http.HandlerFunc(h.unlock)))
	return h
}

// ServeHTTP authenticates every request before routing it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	// Nothing but this page's own inline style: no script runs, even one a
	// key name smuggled in; no other site may frame it (clickjacking).
	hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cache-Control", "no-store")
	user, ok := h.admin(w, r)
	if !ok {
		return
	}
	h.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
}

type userKey struct{}

func userOf(r *http.Request) string { s, _ := r.Context().Value(userKey{}).(string); return s }

func (h *Handler) render(w http.ResponseWriter, status int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := templates.ExecuteTemplate(w, name, data); err != nil {
		h.logger.Warn("status page: rendering failed", "page", name, "err", err)
	}
}

// confirm shows the lock and asks whether to force-unlock it.
func (h *Handler) confirm(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	entry, err := h.engine.Read(ctx, key)
	h.render(w, http.StatusOK, "confirm.html", map[string]any{
		"Key": key, "Entry": entry, "Err": err, "Token": h.token(userOf(r)),
	})
}

// unlock force-unlocks after the confirmation page's POST.
func (h *Handler) unlock(w http.ResponseWriter, r *http.Request) {
	user := userOf(r)
	if !h.validToken(user, r.PostFormValue("token")) {
		http.Error(w, "403 forbidden: missing or wrong form token (reload the status page)", http.StatusForbidden)
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		http.Error(w, "400 bad request: force-unlock needs the confirmation page's confirm=yes", http.StatusBadRequest)
		return
	}
	key := r.PostFormValue("key")
	if quorum.IsInternal(key) {
		http.Error(w, "403 forbidden: keys starting "+quorum.InternalPrefix+" are the engine's own", http.StatusForbidden)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	existed, err := h.server.ForceUnlock(ctx, user, r.RemoteAddr, key)
	status := http.StatusOK
	if err != nil {
		status = http.StatusServiceUnavailable
	}
	h.render(w, status, "unlocked.html", map[string]any{"Key": key, "Existed": existed, "Err": err})
}

// readTimeout bounds the quorum reads one page does.
const readTimeout = 10 * time.Second
