// Command nemesis runs a seeded, randomized schedule of faults against real
// redis-servers and proxy replicas while many clients of every kind (plain
// SET NX PX, Redisson's hash lock scripts, native LOCK.* with WAIT and
// SESSION) take a few contended keys; every client operation goes into a
// history (internal/history), which a checker reads whole at the end.
//
//	go run ./e2e/nemesis -seed 7 -for 10m [-replicas 2] [-backends 5] [-clients 12] [-proxy-bin PATH] [-hostile]
//
// It prints the seed, the faults with their times, per-kind per-outcome
// counts and the verdict, writes the history as JSON lines to a file it
// names, and exits 1 on any anomaly (2 when the run could not be set up).
package main
