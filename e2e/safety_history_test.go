package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	hist "github.com/redlock-proxy/redlock-proxy/internal/history"
)

// The fault suite's whole-history check: every op of a row (acquires with
// their tokens, releases, LOCK.TOKEN reads) goes through hist.Check, so an
// anomaly no row's own assertion looks for still fails the row. A row whose
// history breaks the contract leaves it behind for replay.

// checkHistory checks r's history for sc. It returns the SAFETY.md cell and
// an error when the verdict is not what the row claims: no anomaly in model,
// an overlap found where the row shows the checker can fail (quarantine
// off), anything for the clock jump (out of model: reported only).
func checkHistory(t *testing.T, sc scenario, r *outcome) (string, error) {
	ops := r.h.rec.Ops()
	res := hist.Check(ops, hist.Options{AllowLate: sc.lateOK})
	r.check = res
	cell := fmt.Sprintf("%d ops: %s", res.Ops, verdictCell(res))
	if res.OK() && sc.name != quarantineOffRow {
		return cell, nil
	}
	name := "redlock-history-" + strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(sc.name), "-"), "-")
	if len(name) > 80 {
		name = name[:80]
	}
	path, err := hist.Save(hist.Dir(), name, ops, res)
	if err != nil {
		t.Logf("%s: saving its history: %v", sc.name, err)
	}
	replay := fmt.Sprintf("history %s (timeline %s.html); replay: go run ./cmd/histcheck%s %s",
		path, strings.TrimSuffix(path, ".jsonl"), map[bool]string{true: " -allow-late"}[sc.lateOK], path)
	first := ""
	if len(res.Anomalies) > 0 {
		first = "; first: " + res.Anomalies[0].String()
	}
	switch {
	case sc.name == quarantineOffRow && res.OK():
		return cell, fmt.Errorf("the history check found nothing where quarantine off lets a second owner in; %s", replay)
	case sc.name == quarantineOffRow, sc.outOfModel:
		t.Logf("%s (out of model): %s%s; %s", sc.name, res.Verdict(), first, replay)
		return cell, nil
	}
	return cell, fmt.Errorf("history check: %s%s; %s", res.Verdict(), first, replay)
}

const quarantineOffRow = "the same with quarantine switched off (out of model)"

// verdictCell is the verdict for a table cell: "linear", or the anomalies
// by kind.
func verdictCell(res hist.Result) string {
	if res.OK() {
		return "no anomaly"
	}
	v := res.Verdict()
	return v[strings.Index(v, ": ")+2:]
}
