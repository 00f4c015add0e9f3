package grafana

import (
	m "github.com/redlock-proxy/redlock-proxy/proxy"
)

// New builds the redlock-proxy dashboard. Every query names its metric by
// the constant the proxy registers it under (proxy.Metric*).
func New() *Dashboard {
	l := &layout{}
	by := func(labels string) string { return "sum by (" + labels + ") " }
	ratio := func(num, den string) string { return "(" + num + ") / (" + den + ")" }

	l.row("Quorum and backends")
	l.stat("Quorum", "1 while a quorum of backends is usable (up, out of quarantine): locks can be granted. 0: every lock command answers NOQUORUM (runbook: RedlockQuorumLost).", 6,
		FieldDefaults{Thresholds: thresholds("red", 1.0, "green"), Mappings: []Mapping{{Type: "value", Options: map[string]MappingValue{
			"0": {Text: "NO QUORUM", Color: "red", Index: 0}, "1": {Text: "ok", Color: "green", Index: 1}}}}},
		q(sel(m.MetricQuorum), "{{instance}}"))
	l.stat("Backends usable", "Backends up and out of quarantine, per replica.", 6, FieldDefaults{Thresholds: thresholds("red", 3.0, "green")},
		q(by("instance")+"("+sel(m.MetricBackendUp)+" * (1 - "+sel(m.MetricBackendQuarantine)+"))", "{{instance}}"))
	l.stat("Backends quarantined", "Backends in restart quarantine (they count for release, not for acquire or extend, until max_ttl has passed).", 6,
		FieldDefaults{Thresholds: thresholds("green", 1.0, "orange")},
		q(by("instance")+"("+sel(m.MetricBackendQuarantine)+")", "{{instance}}"))
	l.stat("Build", "Versions running (redlock_build_info); more than one outside an upgrade is a half-finished rollout.", 6,
		FieldDefaults{Thresholds: thresholds("green", 2.0, "orange")},
		q("count(count by (version) ("+sel(m.MetricBuildInfo)+"))", "versions"))
	l.graph("Backend up", "1 when the backend answered its last health check.", "none", 8,
		q(sel(m.MetricBackendUp), "{{instance}} {{backend}}"))
	l.graph("Backend quarantined", "1 while the backend is in restart quarantine.", "none", 8,
		q(sel(m.MetricBackendQuarantine), "{{instance}} {{backend}}"))
	l.graph("Health check latency", "Duration of each backend's last health check.", "s", 8,
		q(sel(m.MetricBackendCheck), "{{instance}} {{backend}}"))
	l.graph("Backend request latency p99", "Time for one backend to answer one operation, queueing included.", "s", 12,
		q(quantile(0.99, m.MetricBackendDuration, "backend"), "{{backend}}"))
	l.graph("Backend errors", "Backend operations that failed or timed out, per second.", "ops", 12,
		q(by("backend")+"("+rate(sel(m.MetricBackendErrors))+")", "{{backend}}"))

	l.row("Rounds")
	l.graph("Rounds by command and outcome", "Lock rounds per second. no_quorum: too few backends answered; validity_spent: the round took longer than the lock's TTL allowed.", "ops", 12,
		q(by("command, outcome")+"("+rate(sel(m.MetricRounds))+")", "{{command}} {{outcome}}"))
	l.graph("NOQUORUM share", "Share of rounds answered NOQUORUM (runbook: RedlockNoQuorumReplies).", "percentunit", 12,
		q(ratio("sum("+rate(sel(m.MetricRounds, `outcome="no_quorum"`))+")", "sum("+rate(sel(m.MetricRounds))+")"), "no_quorum"))
	l.graph("Round latency p50", "Time from the first backend send to the decision, by command.", "s", 8,
		q(quantile(0.5, m.MetricRoundDuration, "command"), "{{command}}"))
	l.graph("Round latency p90", "", "s", 8, q(quantile(0.9, m.MetricRoundDuration, "command"), "{{command}}"))
	l.graph("Round latency p99", "Alert RedlockRoundLatencyHigh above 50ms.", "s", 8, q(quantile(0.99, m.MetricRoundDuration, "command"), "{{command}}"))
	l.graph("Rounds in flight", "Rounds running now.", "none", 12, q(sel(m.MetricInflight), "{{instance}}"))
	l.graph("Commands", "Commands processed per second.", "ops", 12, q(rate(sel(m.MetricCommands)), "{{instance}}"))

	l.row("Locks")
	l.graph("Contention", "Acquire rounds that found the lock taken, per second, and as a share of acquires.", "ops", 12,
		q(by("instance")+"("+rate(sel(m.MetricContention))+")", "{{instance}} taken/s"))
	l.graph("Contended share of acquires", "", "percentunit", 12,
		q(ratio("sum("+rate(sel(m.MetricContention))+")", "sum("+rate(sel(m.MetricRounds, `command="acquire"`))+")"), "taken / acquires"))
	l.graph("Validity margin", "Time left of the asked TTL when a lock was granted or extended (low quantiles: how close clients run to their deadline).", "s", 12,
		q(quantile(0.01, m.MetricValidityMargin, ""), "p1"), q(quantile(0.5, m.MetricValidityMargin, ""), "p50"))
	l.graph("Grants under 50ms of validity", "Share of grants and extensions that left under 50ms (runbook: RedlockValidityMarginThin).", "percentunit", 12,
		q(ratio("sum("+rate(sel(m.MetricValidityMargin+"_bucket", `le="0.05"`))+")", "sum("+rate(sel(m.MetricValidityMargin+"_count"))+")"), "under 50ms"))
	l.graph("Rollbacks and revokes", "Failed acquires rolled back; rollback deletes that failed (keys blocked until their TTL); grants revoked because the reply could not be written in time.", "ops", 24,
		q(by("instance")+"("+rate(sel(m.MetricRollbacks))+")", "{{instance}} rollbacks"),
		q(by("instance")+"("+rate(sel(m.MetricRollbackFailures))+")", "{{instance}} rollback failures"),
		q(by("instance")+"("+rate(sel(m.MetricGrantsRevoked))+")", "{{instance}} grants revoked"))
	l.graph("Fenced grants by rounds", "Fenced grants (LOCK.ACQUIRE, RFencedLock) given in one round, and those that needed a raise round too because the backends' token counters disagreed.", "ops", 24,
		q("sum by (rounds) ("+rate(sel(m.MetricFencedGrants))+")", "{{rounds}}"))

	l.row("Sessions and waiters")
	l.graph("Session locks", "Connection-bound locks each replica renews.", "none", 8, q(sel(m.MetricSessionLocks), "{{instance}}"))
	l.graph("Session renewals and losses", "Renewal rounds (one per batch), renewals a quorum took, locks lost (runbook: RedlockSessionLocksLost), released on close.", "ops", 8,
		q(by("instance")+"("+rate(sel(m.MetricSessionRenewals))+")", "{{instance}} renewal rounds"),
		q(by("instance")+"("+rate(sel(m.MetricSessionRenewed))+")", "{{instance}} renewed"),
		q(by("instance")+"("+rate(sel(m.MetricSessionLost))+")", "{{instance}} lost"),
		q(by("instance")+"("+rate(sel(m.MetricSessionReleased))+")", "{{instance}} released"))
	l.graph("Waiting clients", "LOCK.ACQUIRE ... WAIT requests waiting for a lock now.", "none", 8, q(sel(m.MetricWaiting), "{{instance}}"))

	l.row("Connections and build")
	l.graph("Client connections", "Open client connections against max_clients (runbook: RedlockConnectionsNearMax).", "none", 8,
		q(sel(m.MetricClients), "{{instance}} open"), q(sel(m.MetricMaxClients), "{{instance}} max_clients"))
	l.graph("Connections accepted and refused", "Refused: at max_clients, or while shutting down.", "ops", 8,
		q(rate(sel(m.MetricAccepted)), "{{instance}} accepted"), q(rate(sel(m.MetricRejected)), "{{instance}} refused"))
	l.add(Panel{Type: "table", Title: "Build info", Description: "The version and commit each replica runs.",
		Targets: []Target{{Expr: sel(m.MetricBuildInfo), Format: "table", Instant: true}},
		Options: map[string]any{"showHeader": true}}, 8, 8)

	return &Dashboard{
		UID: "redlock-proxy", Title: "redlock-proxy", Editable: true, GraphTooltip: 1, SchemaVersion: 39, Version: 1,
		Description: "Generated by deploy/grafana (go generate ./deploy/grafana); do not edit the JSON by hand.",
		Tags:        []string{"redlock-proxy", "redis", "locks"}, Refresh: "30s", Time: TimeRange{From: "now-3h", To: "now"},
		Annotations: Annotations{List: []any{}},
		Templating: Templating{List: []Variable{
			{Name: "datasource", Label: "Data source", Type: "datasource", Query: "prometheus"},
			{Name: "instance", Label: "Replica", Type: "query", Datasource: ds, Refresh: 2, IncludeAll: true, Multi: true, AllValue: ".*",
				Definition: "label_values(" + m.MetricBuildInfo + ", instance)",
				Query:      VariableQuery{Query: "label_values(" + m.MetricBuildInfo + ", instance)", RefID: "instance"}},
		}},
		Panels: l.panels,
	}
}
