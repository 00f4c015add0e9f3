// Command bench measures redlock-proxy against one direct redis-server and
// against redsync, on real redis-servers, and writes BENCHMARKS.md.
//
//	go run ./bench            # from the repository root; about 5 minutes
//	go run ./bench -quick     # a smoke run with small counts
//
// Each case runs -runs times, interleaved with the others, and the table
// shows medians. The machine is shared and noisy: compare the ratios, which
// are taken within one run, not the absolute numbers across runs.
package main
