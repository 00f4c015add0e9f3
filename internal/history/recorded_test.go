package history

import (
	"os"
	"testing"
)

// TestRecordedPreFixHistory: the fault suite's review-3 row ("a hostile
// client rewrites the bookkeeping ...; a plain lock's first LOCK.TOKEN read at
// once through both replicas"), run on c1414d4, the code before that
// review's fixes, left this history. It counted no overlap; Check finds the
// two bugs the review reported: one lock answering two tokens (concurrent
// first LOCK.TOKEN reads) and tokens going back (counters reset by forged
// bookkeeping writes).
func TestRecordedPreFixHistory(t *testing.T) {
	f, err := os.Open("testdata/c1414d4-review3.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ops, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	r := Check(ops, Options{})
	n := map[string]int{}
	for _, a := range r.Anomalies {
		n[a.Kind]++
	}
	if n["two-tokens"] == 0 || n["token-backwards"] == 0 || n["overlap"] != 0 {
		t.Fatalf("%s", r.Verdict())
	}
	t.Log(r.Verdict())
}
