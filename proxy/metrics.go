package proxy

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// roundKind is which lock operation a round was.
type roundKind uint8

const (
	kindAcquire roundKind = iota
	kindRelease
	kindExtend
	kindRead
	kindForceRelease
	nKinds
)

var kindNames = [nKinds]string{"acquire", "release", "extend", "read", "force_release"}

// outcome is how a round ended.
type outcome uint8

const (
	outcomeOK outcome = iota
	outcomeTaken
	outcomeNotHeld
	outcomeNoQuorum
	outcomeValiditySpent
	outcomeError
	nOutcomes
)

var outcomeNames = [nOutcomes]string{"ok", "taken", "not_held", "no_quorum", "validity_spent", "error"}

func outcomeOf(err error) outcome {
	switch {
	case err == nil:
		return outcomeOK
	case errors.Is(err, quorum.ErrTaken):
		return outcomeTaken
	case errors.Is(err, quorum.ErrNotHeld):
		return outcomeNotHeld
	case errors.Is(err, quorum.ErrValiditySpent):
		return outcomeValiditySpent
	case errors.Is(err, quorum.ErrNoQuorum):
		return outcomeNoQuorum
	}
	return outcomeError
}

// Metrics counts what the proxy does, for INFO and for Prometheus (it is a
// prometheus.Collector). Create it first, hand ObserveBackend to the engine
// (quorum.WithObserver) and the Metrics to the server (WithMetrics).
type Metrics struct {
	rounds      [nKinds][nOutcomes]atomic.Int64
	inflight    atomic.Int64
	roundsDone  atomic.Int64 // rounds (lock and read commands) ended, answered or not
	connections atomic.Int64 // accepted, all time
	rejected    atomic.Int64
	commands    atomic.Int64
	lapsed      atomic.Int64 // grants revoked because their reply could not go out in time
	refusals    atomic.Int64 // requests refused for a limit (refusals.go)
	backoffs    atomic.Int64 // reads a connection held back for its user's refusals

	roundSeconds   *prometheus.HistogramVec
	roundObs       [nKinds]prometheus.Observer // resolved once: the lock path does no label lookup
	validity       prometheus.Histogram
	backendSeconds *prometheus.HistogramVec
	backendErrors  *prometheus.CounterVec
	backends       sync.Map // addr -> *backendObs

	server atomic.Pointer[Server]
}

// backendObs is one backend's resolved series.
type backendObs struct {
	seconds prometheus.Observer
	errors  prometheus.Counter
}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics {
	buckets := []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	m := &Metrics{
		roundSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: MetricRoundDuration, Help: "Time from the first backend send to the decision, by command.", Buckets: buckets,
		}, []string{"command"}),
		validity: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: MetricValidityMargin, Help: "Time left of the asked TTL when a lock was granted or extended.",
			Buckets: []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 600},
		}),
		backendSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: MetricBackendDuration, Help: "Time for one backend to answer one operation, queueing included.", Buckets: buckets,
		}, []string{"backend"}),
		backendErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricBackendErrors, Help: "Backend operations that failed or timed out.",
		}, []string{"backend"}),
	}
	for k := range nKinds {
		m.roundObs[k] = m.roundSeconds.WithLabelValues(kindNames[k])
	}
	return m
}

// ObserveBackend records one backend answer; pass it to quorum.WithObserver.
func (m *Metrics) ObserveBackend(addr string, d time.Duration, err error) {
	v, ok := m.backends.Load(addr)
	if !ok {
		v, _ = m.backends.LoadOrStore(addr, &backendObs{
			seconds: m.backendSeconds.WithLabelValues(addr),
			errors:  m.backendErrors.WithLabelValues(addr),
		})
	}
	b := v.(*backendObs)
	b.seconds.Observe(d.Seconds())
	if err != nil {
		b.errors.Inc()
	}
}

// observe records one finished round.
func (m *Metrics) observe(kind roundKind, start time.Time, err error, validity time.Duration) {
	m.rounds[kind][outcomeOf(err)].Add(1)
	m.roundObs[kind].Observe(time.Since(start).Seconds())
	if err == nil && validity > 0 {
		m.validity.Observe(validity.Seconds())
	}
}

// Rounds is how many rounds of a command ended with an outcome (names as in
// the redlock_rounds_total labels).
func (m *Metrics) Rounds(command, outcome string) int64 {
	for k, kn := range kindNames {
		for o, on := range outcomeNames {
			if kn == command && on == outcome {
				return m.rounds[k][o].Load()
			}
		}
	}
	return 0
}

var (
	descRounds      = prometheus.NewDesc(MetricRounds, "Lock rounds by command and outcome.", []string{"command", "outcome"}, nil)
	descContention  = prometheus.NewDesc(MetricContention, "Acquire rounds that found the lock taken.", nil, nil)
	descInflight    = prometheus.NewDesc(MetricInflight, "Rounds running now.", nil, nil)
	descClients     = prometheus.NewDesc(MetricClients, "Open client connections.", nil, nil)
	descAccepted    = prometheus.NewDesc(MetricAccepted, "Client connections accepted.", nil, nil)
	descRejected    = prometheus.NewDesc(MetricRejected, "Client connections refused (max_clients, shutdown).", nil, nil)
	descCommands    = prometheus.NewDesc(MetricCommands, "Commands processed.", nil, nil)
	descRollbacks   = prometheus.NewDesc(MetricRollbacks, "Failed acquires rolled back.", nil, nil)
	descRollbackErr = prometheus.NewDesc(MetricRollbackFailures, "Rollback deletes that failed (the key expires with its TTL).", nil, nil)
	descFenced      = prometheus.NewDesc(MetricFencedGrants, "Fenced grants given (LOCK.ACQUIRE, RFencedLock), by rounds: one where Q holders counted up to the token, else a raise too (the backends' counters disagreed).", []string{"rounds"}, nil)
	descLapsed      = prometheus.NewDesc(MetricGrantsRevoked, "Grants revoked because their reply could not be written within the lock's window.", nil, nil)
	descSessions    = prometheus.NewDesc(MetricSessionLocks, "Connection-bound locks this proxy renews.", nil, nil)
	descRenewals    = prometheus.NewDesc(MetricSessionRenewals, "Batched renewal rounds of session locks (one operation per backend each).", nil, nil)
	descRenewed     = prometheus.NewDesc(MetricSessionRenewed, "Session lock renewals that a quorum took.", nil, nil)
	descLost        = prometheus.NewDesc(MetricSessionLost, "Session locks given up: gone from a quorum, or not renewed within their window.", nil, nil)
	descReleased    = prometheus.NewDesc(MetricSessionReleased, "Session locks released because their connection closed.", nil, nil)
	descUp          = prometheus.NewDesc(MetricBackendUp, "1 when the backend answered its last health check.", []string{"backend"}, nil)
	descQuarantined = prometheus.NewDesc(MetricBackendQuarantine, "1 while the backend is in restart quarantine.", []string{"backend"}, nil)
	descCheck       = prometheus.NewDesc(MetricBackendCheck, "Duration of the backend's last health check.", []string{"backend"}, nil)
	descQuorum      = prometheus.NewDesc(MetricQuorum, "1 when enough backends are usable to grant locks.", nil, nil)
	descWaiting     = prometheus.NewDesc(MetricWaiting, "LOCK.ACQUIRE ... WAIT requests waiting for a lock now.", nil, nil)
	descMaxClients  = prometheus.NewDesc(MetricMaxClients, "The max_clients setting: connections beyond it are refused.", nil, nil)
	descRefusals    = prometheus.NewDesc(MetricLimitRefusals, "Requests refused for a per-connection or per-user limit (waiters, session locks, patterns, subscriptions).", nil, nil)
	descBackoffs    = prometheus.NewDesc(MetricRefusalBackoffs, "Times a connection waited before its next read because its user spent its limit_refusals_per_user budget.", nil, nil)
)

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRounds, descContention, descInflight, descClients, descAccepted, descRejected,
		descCommands, descRollbacks, descRollbackErr, descFenced, descLapsed, descSessions, descRenewals, descRenewed, descLost, descReleased,
		descUp, descQuarantined, descCheck, descQuorum, descWaiting, descMaxClients, descRefusals, descBackoffs} {
		ch <- d
	}
	m.roundSeconds.Describe(ch)
	m.validity.Describe(ch)
	m.backendSeconds.Describe(ch)
	m.backendErrors.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for k := range nKinds {
		for o := range nOutcomes {
			ch <- prometheus.MustNewConstMetric(descRounds, prometheus.CounterValue, float64(m.rounds[k][o].Load()), kindNames[k], outcomeNames[o])
		}
	}
	counter := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter(descContention, m.rounds[kindAcquire][outcomeTaken].Load())
	gauge(descInflight, float64(m.inflight.Load()))
	counter(descAccepted, m.connections.Load())
	counter(descRejected, m.rejected.Load())
	counter(descCommands, m.commands.Load())
	counter(descLapsed, m.lapsed.Load())
	counter(descRefusals, m.refusals.Load())
	counter(descBackoffs, m.backoffs.Load())
	if s := m.server.Load(); s != nil {
		gauge(descClients, float64(s.Clients()))
		gauge(descMaxClients, float64(s.opts.MaxClients))
		gauge(descWaiting, float64(s.native.waiting.Load()))
		rb, rbFailed := s.engine.Rollbacks()
		counter(descRollbacks, rb)
		counter(descRollbackErr, rbFailed)
		fenced, raised := s.engine.FencedGrants()
		ch <- prometheus.MustNewConstMetric(descFenced, prometheus.CounterValue, float64(fenced-raised), "one")
		ch <- prometheus.MustNewConstMetric(descFenced, prometheus.CounterValue, float64(raised), "raised")
		ss := &s.native.sessions
		gauge(descSessions, float64(ss.count()))
		counter(descRenewals, ss.renewals.Load())
		counter(descRenewed, ss.renewed.Load())
		counter(descLost, ss.lost.Load())
		counter(descReleased, ss.released.Load())
		usable := 0
		for _, st := range s.engine.Status() {
			gauge(descUp, float64(boolInt(st.Up)), st.Addr)
			gauge(descQuarantined, float64(boolInt(st.Quarantined != 0)), st.Addr)
			gauge(descCheck, st.Latency.Seconds(), st.Addr)
			if st.Up && st.Quarantined == 0 && st.DuplicateOf == "" {
				usable++
			}
		}
		gauge(descQuorum, float64(boolInt(usable >= s.engine.Quorum())))
	}
	m.roundSeconds.Collect(ch)
	m.validity.Collect(ch)
	m.backendSeconds.Collect(ch)
	m.backendErrors.Collect(ch)
}
