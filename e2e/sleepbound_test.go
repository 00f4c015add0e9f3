package e2e

import "testing"

// sleepBound marks a test that spends its time waiting (on TTLs, lock-delays,
// quarantines, paused backends and replica shutdowns: a second or two of CPU
// in 10 to 50 s), not working: it runs beside the other such tests once the
// package's serial tests are done, up to go test's -parallel at once (.ci/run
// gives 4). A test that measures throughput or latency, loads the machine,
// changes the process's environment (t.Setenv) or anything shared, stays
// serial. Each sleep-bound test has its own redis-servers and replicas on
// free ports.
func sleepBound(t *testing.T) { t.Parallel() }
