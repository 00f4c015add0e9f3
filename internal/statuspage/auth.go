package statuspage

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/redlock-proxy/redlock-proxy/proxy"
)

// admin returns the admin the request authenticates as (HTTP Basic: the
// Redis user name, empty for the default user, and its password), or
// answers 401 (no or wrong credentials) or 403 (not an admin) itself.
func (h *Handler) admin(w http.ResponseWriter, r *http.Request) (string, bool) {
	name, pass, given := r.BasicAuth()
	var user string
	err := errNoCredentials
	// A browser's first request carries no credentials: that is a prompt,
	// not a failed guess to throttle and log.
	if given || !h.server.AuthRequired() {
		user, err = h.server.AuthenticateAdmin(r.Context(), r.RemoteAddr, name, pass)
	}
	switch {
	case errors.Is(err, proxy.ErrNotAdmin):
		http.Error(w, "403 forbidden: the status page is for admins (the default user, or a user with admin: true)", http.StatusForbidden)
		return "", false
	case err != nil:
		w.Header().Set("WWW-Authenticate", `Basic realm="redlock-proxy status", charset="UTF-8"`)
		http.Error(w, "401 unauthorized: sign in with an admin's Redis user name (empty or default for requirepass) and password", http.StatusUnauthorized)
		return "", false
	}
	return user, true
}

var errNoCredentials = errors.New("no credentials")

// token is the anti-CSRF token of user's forms: an HMAC under a key this
// process drew at start, so only a page this server rendered for that
// user carries it.
func (h *Handler) token(user string) string {
	m := hmac.New(sha256.New, h.secret[:])
	m.Write([]byte("force-unlock\x00" + user))
	return hex.EncodeToString(m.Sum(nil))
}

// validToken compares in constant time.
func (h *Handler) validToken(user, got string) bool {
	return hmac.Equal([]byte(h.token(user)), []byte(got))
}
