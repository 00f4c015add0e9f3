package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/history"
)

// TestReplay: a saved failing history replays to exit 1 with an HTML
// timeline naming the overlap; a legal one to exit 0.
func TestReplay(t *testing.T) {
	ms := time.Millisecond
	bad := []history.Op{
		{Key: "k", Kind: history.Acquire, Owner: "A", TTL: 1000 * ms, Invoke: 0, Return: 10 * ms, Outcome: history.OK},
		{Key: "k", Kind: history.Acquire, Owner: "B", TTL: 1000 * ms, Invoke: 100 * ms, Return: 110 * ms, Outcome: history.OK},
	}
	dir := t.TempDir()
	path, err := history.Save(dir, "bad", bad, history.Check(bad, history.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.html")
	if code := run(path, out, false); code != 1 {
		t.Fatalf("exit %d for an overlap, want 1", code)
	}
	page, _ := os.ReadFile(out)
	if !strings.Contains(string(page), "overlap on k") || !strings.Contains(string(page), "<svg") {
		t.Fatalf("the timeline does not show the overlap:\n%s", page)
	}
	good, _ := history.Save(dir, "good", bad[:1], history.Result{})
	if code := run(good, "", false); code != 0 {
		t.Fatalf("exit %d for a legal history", code)
	}
}
