// Command bench measures redlock-proxy against one direct redis-server and
// against redsync, on real redis-servers, and writes BENCHMARKS.md.
//
//	go run ./bench            # from the repository root; about 5 minutes
//	go run ./bench -quick     # a smoke run with small counts
//	go run ./bench -only hostile -baseline main  # only the hostile-tenant section (issue 25), printed; about 4 minutes
//	go run ./bench -only floor -baseline main    # only the floor section (issue 27), printed; about 5 minutes
//	go run ./bench -only wake                    # only the Redisson wake-up across replicas (issue 26), printed; under a minute
//
// The floor section (floor.go) builds limitproxy (../shared/tools/limitproxy
// of the repository or of its main checkout, or -floor DIR; without it the
// floor rows are skipped with the reason) in a temporary folder, starts it
// over 5 redis-servers of its own, and measures SET NX PX through it, through
// this tree's proxy N=5 and through the -baseline's, in turn within each run:
// throughput at -P 1 and -P 16, p50 at one client, and each process's CPU
// per request at -P 16; with LOCK.ACQUIRE beside SET NX PX on the proxy.
// A full run appends it to the report.
//
// The hostile section (hostile.go) runs an honest tenant alone and beside
// each hostile mix of issue 25 (pattern storms, parked waiters and session
// pipelining, all at once), on this tree's proxy and the -baseline's, and
// prints the latency and throughput ratios and the proxy's CPU in the
// second after the hostile load stopped. The hostile load runs in a child
// process (this binary with -hostile-load), as a hostile tenant runs on
// machines of its own: the honest clients do not share a Go scheduler with
// its thousands of goroutines. A full run appends it to the report.
//
// The Redisson contention rows (redisson.go; issue 26) run the real client:
// compat/java/RedissonContention.java, compiled against Redisson 3.52.0 as
// ../shared/tools/java-clients.sh builds it (-redisson DIR), against one
// direct redis-server and through two replicas of the proxy N=5. Without
// the folder they are left out, saying why.
//
//	go run ./bench -redisson /tmp/java-clients
//
// The wake-up section (wake.go; issue 26) times a Redisson waiter's wake-up:
// client A locks and unlocks with Redisson 3.52's recorded RLock scripts
// while client B waits on the lock's channel, from A's unlock sent to B's
// message, on one redis-server and with A and B on two replicas of the
// proxy N=5 (-handoffs wake-ups each). A full run appends it too.
//
// Each case runs -runs times, interleaved with the others, and the table
// shows medians. Each redis-benchmark case locks keys of its own (ownKeys):
// servers sharing backends never meet the locks an earlier case left, which
// made the later of two cases look faster (a SET NX that finds its key
// taken costs the backends less). The machine is shared and noisy: compare the ratios, which
// are taken within one run, not the absolute numbers across runs.
package main
