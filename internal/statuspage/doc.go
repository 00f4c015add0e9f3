// Package statuspage is the proxy's status page on http_listen (/status):
// server-rendered HTML (html/template, inline CSS, no script and no
// external asset, so it works air-gapped) showing each backend's state,
// quarantine time left and check latency, the quorum, the locks a quorum
// holds now (REDLOCK LOCKS, paged and filtered by prefix), the requests
// waiting per key, the session locks this replica renews and the keys
// whose acquires most often found the lock taken; and a force-unlock per
// lock that asks for confirmation on a page of its own and then does what
// REDLOCK FORCEUNLOCK does, audit line included.
//
// It assumes the proxy's own authentication: when requirepass or users are
// configured, every request needs HTTP Basic credentials of an admin (the
// default user, or a user with admin: true), checked and throttled as AUTH
// is; without authentication the page is open, as REDLOCK is. POSTs need a
// token bound to the user and pass Go's cross-origin protection
// (Sec-Fetch-Site / Origin), so another site cannot make an admin's browser
// force-unlock. Waiters, session locks and contention are this replica's
// own view; the locks and backends are the quorum's.
package statuspage
