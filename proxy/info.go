package proxy

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

func (s *Server) commandNames() []string {
	names := make([]string, 0, len(s.cmds))
	for name := range s.cmds {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// cmdInfo: INFO [section...]. Sections: server, clients, persistence (with
// loading:0, which ioredis waits for), replication (role:master), stats,
// cluster (cluster_enabled:0, which tools read) and redlock with each
// backend's state. "all", "everything" and "default" give all.
func (s *Server) cmdInfo(c *request, args [][]byte) {
	want := map[string]bool{}
	for _, a := range args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all := len(want) == 0 || want["all"] || want["everything"] || want["default"]
	sections := []struct {
		name string
		body func() string
	}{
		{"server", s.infoServer},
		{"clients", s.infoClients},
		{"persistence", func() string { return "loading:0\r\nrdb_changes_since_last_save:0\r\naof_enabled:0\r\n" }},
		{"replication", func() string { return "role:master\r\nconnected_slaves:0\r\n" }},
		{"stats", s.infoStats},
		{"cluster", func() string { return "cluster_enabled:0\r\n" }},
		{"redlock", func() string { return s.infoRedlock(c.isAdmin()) }},
	}
	var b strings.Builder
	for _, sec := range sections {
		if !all && !want[sec.name] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		fmt.Fprintf(&b, "# %s%s\r\n%s", strings.ToUpper(sec.name[:1]), sec.name[1:], sec.body())
	}
	c.wr.WriteBulkString(b.String())
}

func (s *Server) infoServer() string {
	port := ""
	s.mu.Lock()
	for ln := range s.listeners {
		_, port, _ = net.SplitHostPort(ln.Addr().String())
	}
	s.mu.Unlock()
	up := time.Since(s.started)
	return fmt.Sprintf("redis_version:%s\r\nredlock_proxy_version:%s\r\nredlock_proxy_git_sha1:%s\r\n"+
		"redis_mode:standalone\r\nserver_name:redlock-proxy\r\nos:%s %s\r\narch_bits:64\r\ngo_version:%s\r\nprocess_id:%d\r\nrun_id:%s\r\ntcp_port:%s\r\nuptime_in_seconds:%d\r\nuptime_in_days:%d\r\n",
		version, s.opts.build[0], s.opts.build[1], runtime.GOOS, runtime.GOARCH, runtime.Version(), os.Getpid(), s.runID, port, int(up.Seconds()), int(up.Hours()/24))
}

func (s *Server) infoClients() string {
	return fmt.Sprintf("connected_clients:%d\r\nmaxclients:%d\r\nblocked_clients:%d\r\n", s.Clients(), s.opts.MaxClients, s.native.waiting.Load())
}

func (s *Server) infoStats() string {
	m := s.metrics
	var b strings.Builder
	fmt.Fprintf(&b, "total_connections_received:%d\r\ntotal_commands_processed:%d\r\nrejected_connections:%d\r\ninflight_rounds:%d\r\n",
		m.connections.Load(), m.commands.Load(), m.rejected.Load(), m.inflight.Load())
	rb, rbFailed := s.engine.Rollbacks()
	fmt.Fprintf(&b, "rollbacks:%d\r\nrollback_failures:%d\r\n", rb, rbFailed)
	fenced, raised := s.engine.FencedGrants()
	fmt.Fprintf(&b, "fenced_grants:%d\r\nfenced_grants_raised:%d\r\n", fenced, raised)
	ss := &s.native.sessions
	fmt.Fprintf(&b, "session_locks:%d\r\nsession_renewal_rounds:%d\r\nsession_renewed:%d\r\nsession_lost:%d\r\nsession_released:%d\r\n",
		ss.count(), ss.renewals.Load(), ss.renewed.Load(), ss.lost.Load(), ss.released.Load())
	fmt.Fprintf(&b, "limit_refusals:%d\r\nrefusal_backoffs:%d\r\n", m.refusals.Load(), m.backoffs.Load())
	for k := range nKinds {
		for o := range nOutcomes {
			if n := m.rounds[k][o].Load(); n > 0 {
				fmt.Fprintf(&b, "rounds_%s_%s:%d\r\n", kindNames[k], outcomeNames[o], n)
			}
		}
	}
	return b.String()
}

// infoRedlock shows each backend as the health monitor last saw it. Its
// run_id only to an admin: it is what a restarted backend's marker names.
func (s *Server) infoRedlock(admin bool) string {
	usable := 0
	var nodes strings.Builder
	for i, st := range s.engine.Status() {
		if !admin {
			st.RunID = "hidden"
		}
		state := "up"
		switch {
		case !st.Up:
			state = "down"
		case st.DuplicateOf != "":
			state = "duplicate"
		case st.Quarantined != 0:
			state = "quarantined"
		default:
			usable++
		}
		fmt.Fprintf(&nodes, "backend%d:addr=%s,state=%s,run_id=%s,persistent=%d,quarantine_left_ms=%d,latency_us=%d,counters_intact=%d",
			i, st.Addr, state, st.RunID, boolInt(st.Persistent), max(st.Quarantined.Milliseconds(), 0), st.Latency.Microseconds(),
			boolInt(st.Intact))
		if st.DuplicateOf != "" {
			fmt.Fprintf(&nodes, ",same_server_as=%s", st.DuplicateOf)
		}
		if st.Err != nil {
			fmt.Fprintf(&nodes, ",error=%s", strings.NewReplacer(",", ";", "\r", " ", "\n", " ").Replace(st.Err.Error()))
		}
		nodes.WriteString("\r\n")
	}
	return fmt.Sprintf("backends:%d\r\nquorum:%d\r\nbackends_usable:%d\r\nquorum_available:%d\r\nmax_ttl_ms:%d\r\nquarantine_window_ms:%d\r\n%s",
		s.engine.Nodes(), s.engine.Quorum(), usable, boolInt(usable >= s.engine.Quorum()), s.engine.MaxTTL().Milliseconds(),
		s.engine.QuarantineWindow().Milliseconds(), nodes.String())
}
