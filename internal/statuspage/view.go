package statuspage

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/redlock-proxy/redlock-proxy/proxy"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Paging of the lock list: size per page, and how deep one may page (each
// page reads every lock before it by quorum, as REDLOCK LOCKS does).
const (
	defaultPageSize = 50
	maxPageSize     = 500
	scanLimit       = 20000 // keys per backend, a lock's internal note beside it included
	maxListed       = 10000
	hotKeys         = 20
)

// backendView is one row of the backends table, as INFO's redlock section
// shows it.
type backendView struct {
	Index          int
	Addr, State    string
	QuarantineLeft string // "" when none
	Latency        time.Duration
	Err, Why       string
}

// statusView is everything the page shows.
type statusView struct {
	Backends                   []backendView
	Nodes, Quorum, Usable      int
	QuorumAvailable            bool
	Clients, MaxClients        int
	Waiting                    int64
	Sessions                   []proxy.SessionLock
	Waiters, Hot               []proxy.KeyCount
	Prefix                     string
	Page, PageSize             int
	Locks                      []quorum.Lock
	LocksErr                   error
	Keys                       int // keys the scan found that may hold locks
	First, More                bool
	PrevPage, NextPage, Shown0 int
	Generated                  time.Time
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := statusView{Prefix: q.Get("prefix"), PageSize: defaultPageSize, Generated: time.Now().UTC()}
	if n, err := strconv.Atoi(q.Get("n")); err == nil && n >= 1 {
		v.PageSize = min(n, maxPageSize)
	}
	if p, err := strconv.Atoi(q.Get("page")); err == nil && p >= 0 {
		v.Page = min(p, maxListed/v.PageSize-1)
	}
	v.Nodes, v.Quorum = h.engine.Nodes(), h.engine.Quorum()
	for i, st := range h.engine.Status() {
		b := backendView{Index: i, Addr: st.Addr, Latency: st.Latency.Round(time.Microsecond), Why: st.Why, State: "up"}
		switch {
		case !st.Up:
			b.State = "down"
		case st.DuplicateOf != "":
			b.State = "duplicate"
		case st.Quarantined != 0:
			b.State = "quarantined"
		default:
			v.Usable++
		}
		switch {
		case st.Quarantined > 0:
			b.QuarantineLeft = st.Quarantined.Round(time.Millisecond).String()
		case st.Quarantined < 0:
			b.QuarantineLeft = "pending"
		}
		if st.Err != nil {
			b.Err = st.Err.Error()
		}
		v.Backends = append(v.Backends, b)
	}
	v.QuorumAvailable = v.Usable >= v.Quorum
	v.Clients, v.MaxClients, v.Waiting = h.server.Clients(), h.server.MaxClients(), h.server.Waiting()
	v.Sessions, v.Waiters, v.Hot = h.server.SessionLocks(), h.server.Waiters(), h.contention.Top(hotKeys)

	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	from := v.Page * v.PageSize
	keys, err := h.engine.LockKeys(ctx, v.Prefix, scanLimit)
	if err == nil {
		v.Keys = len(keys)
		v.Locks, err = h.engine.ReadLocks(ctx, keys[min(from, len(keys)):min(from+v.PageSize, len(keys))], v.PageSize)
	}
	v.LocksErr = err
	v.More = len(keys) > from+v.PageSize
	v.First = v.Page == 0
	v.PrevPage, v.NextPage, v.Shown0 = v.Page-1, v.Page+1, from
	h.render(w, http.StatusOK, "status.html", &v)
}
