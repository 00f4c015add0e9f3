package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The real Redisson client under contention (issue 26's rows): the
// program compat/java/RedissonContention.java, run with Redisson 3.52.0 as
// ../shared/tools/java-clients.sh builds it (redisson-3.52.0.jar and its
// .classpath in one folder, -redisson DIR). The library is not in this
// repository and no registry serves it here: without the folder (or java)
// the rows are left out, saying why.

// redissonRunner compiles the program once and runs it.
type redissonRunner struct {
	classpath string // the compiled program, the jar and its dependencies
}

// newRedissonRunner compiles RedissonContention.java against dir's jars,
// or reports why it cannot.
func newRedissonRunner(root, dir string) (*redissonRunner, error) {
	if dir == "" {
		return nil, fmt.Errorf("no -redisson folder (Redisson 3.52.0 built by ../shared/tools/java-clients.sh)")
	}
	jar := filepath.Join(dir, "redisson-3.52.0.jar")
	deps, err := os.ReadFile(filepath.Join(dir, "redisson-3.52.0.classpath"))
	if err != nil {
		return nil, fmt.Errorf("%s lacks Redisson 3.52.0's classpath: %v", dir, err)
	}
	out, err := os.MkdirTemp("", "redisson-bench-")
	if err != nil {
		return nil, err
	}
	cp := jar + ":" + strings.TrimSpace(string(deps))
	src := filepath.Join(root, "compat/java/RedissonContention.java")
	if b, err := exec.Command("javac", "-d", out, "-cp", cp, src).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("javac: %v: %s", err, b)
	}
	return &redissonRunner{classpath: out + ":" + cp}, nil
}

var locksPerSecond = regexp.MustCompile(`^(threads|clients): .*\((\d+) locks/s\)`)

// run runs the program with its two clients at addrs: locks/s of its two
// rows, "threads" (2 clients x 4 threads) and "clients" (8 clients).
func (r *redissonRunner) run(addrs [2]string, tag string) (map[string]float64, error) {
	out, err := exec.Command("java", "-cp", r.classpath, "RedissonContention",
		"redis://"+addrs[0], "redis://"+addrs[1], tag).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("RedissonContention: %v: %s", err, out)
	}
	rows := map[string]float64{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := locksPerSecond.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			rows[m[1]] = v
		}
	}
	if len(rows) != 2 {
		return nil, fmt.Errorf("RedissonContention printed no rows: %s", out)
	}
	return rows, nil
}

// redissonReport is the real client's rows, or why they are missing.
func redissonReport(m measurements, why error) string {
	var b strings.Builder
	b.WriteString("\n## Redisson 3.52.0 RLock under contention, the real client (locks/s)\n\n")
	if why != nil {
		fmt.Fprintf(&b, "Left out: %v.\n", why)
		return b.String()
	}
	b.WriteString("`compat/java/RedissonContention.java` with Redisson 3.52.0 built from source (`-redisson DIR`): every thread " +
		"takes and releases one RLock over and over, waiting as Redisson does (pub/sub, then its retry); through the proxy " +
		"the clients alternate between two replicas of N=5. A fresh JVM each run.\n\n" +
		"| row | direct redis | proxy N=5, two replicas | ratio | target | |\n|---|---|---|---|---|---|\n")
	for _, row := range []struct{ key, label string }{{"threads", "2 clients x 4 threads x 40, one lock"}, {"clients", "8 clients x 100, one lock"}} {
		d, p := m.median("redisson/"+row.key+"/direct"), m.median("redisson/"+row.key+"/n5")
		mark := "**missed**"
		if p/d >= 0.8 {
			mark = "met"
		}
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.2fx | >= 0.8x | %s |\n", row.label, d, p, p/d, mark)
	}
	return b.String()
}
