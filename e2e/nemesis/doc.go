// Command nemesis runs a seeded, randomized schedule of faults against real
// redis-servers and proxy replicas while many clients of every kind (plain
// SET NX PX, Redisson's hash lock and read-write lock scripts, native LOCK.*
// with WAIT and SESSION) take a few contended keys; every client operation goes into a
// history (internal/history), which history.Check reads whole at the end.
// The replicas run with a lock-delay for every kind (native_lock_delay 1 s,
// lock_delay 500 ms) and each acquire notes it (history.Op.Delay): a lock
// that expired unreleased and was taken again inside its delay is an
// anomaly.
//
//	go run ./e2e/nemesis -seed 7 -for 10m [-replicas 2] [-backends 5] [-clients 12] [-proxy-bin PATH] [-hostile]
//	go run ./e2e/nemesis -check FILE   # re-check a history a run wrote
//
// The files by role: plan.go draws the schedule from the seed (at most a
// minority of backends and all but one replica impaired at once);
// cluster.go starts the system and applies each fault; backends.go,
// replicas.go and links.go are the redis-servers, the proxy processes and
// the toxiproxy links between them; clients.go and kinds.go are the
// clients; check.go and run.go check and report.
//
// It prints the seed, the faults with their times, per-kind per-outcome
// counts and the verdict, writes the history as JSON lines (and the
// checker's HTML timeline) to a file it names, and exits 1 on any anomaly
// or accepted bookkeeping command (2 when the run could not be set up).
package main
