package proxy

// The names of the Prometheus series the proxy registers. They are exported
// so that what reads them (the Grafana dashboard generator in
// deploy/grafana/gen, the alert rules' tests) is built from the same names:
// renaming a metric here breaks those builds instead of leaving a panel
// showing "No data". Histograms are named by their base name (the series
// are NAME_bucket, NAME_sum and NAME_count).
const (
	MetricRounds            = "redlock_rounds_total"
	MetricContention        = "redlock_contended_rounds_total"
	MetricInflight          = "redlock_inflight_rounds"
	MetricClients           = "redlock_client_connections"
	MetricMaxClients        = "redlock_max_clients"
	MetricAccepted          = "redlock_connections_accepted_total"
	MetricRejected          = "redlock_connections_rejected_total"
	MetricCommands          = "redlock_commands_total"
	MetricWaiting           = "redlock_waiting_clients"
	MetricRollbacks         = "redlock_rollbacks_total"
	MetricRollbackFailures  = "redlock_rollback_failures_total"
	MetricGrantsRevoked     = "redlock_grants_revoked_total"
	MetricFencedGrants      = "redlock_fenced_grants_total"
	MetricSessionLocks      = "redlock_session_locks"
	MetricSessionRenewals   = "redlock_session_renewal_rounds_total"
	MetricSessionRenewed    = "redlock_session_renewed_total"
	MetricSessionLost       = "redlock_session_lost_total"
	MetricSessionReleased   = "redlock_session_released_total"
	MetricBackendUp         = "redlock_backend_up"
	MetricBackendQuarantine = "redlock_backend_quarantined"
	MetricBackendCheck      = "redlock_backend_check_seconds"
	MetricQuorum            = "redlock_quorum_available"
	MetricBuildInfo         = "redlock_build_info"
	MetricLimitRefusals     = "redlock_limit_refusals_total"
	MetricRefusalBackoffs   = "redlock_refusal_backoffs_total"

	// Histograms and their counters.
	MetricRoundDuration   = "redlock_round_duration_seconds"
	MetricValidityMargin  = "redlock_validity_margin_seconds"
	MetricBackendDuration = "redlock_backend_request_duration_seconds"
	MetricBackendErrors   = "redlock_backend_errors_total"
)
