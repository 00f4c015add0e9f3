package grafana

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The committed redlock-proxy.json is exactly what New generates: nobody
// hand-edited it, and nobody changed the generator without regenerating.
func TestCommittedJSONIsGenerated(t *testing.T) {
	want, err := New().JSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("redlock-proxy.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("deploy/grafana/redlock-proxy.json differs from the generator's output: run go generate ./deploy/grafana and commit it")
	}
}

// Every panel but rows has a query, a unique id and a place on the grid.
func TestPanels(t *testing.T) {
	d := New()
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.X+p.GridPos.W > 24 || p.GridPos.W == 0 || p.GridPos.H == 0 {
			t.Errorf("panel %q off the grid: %+v", p.Title, p.GridPos)
		}
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
	}
	titles, exprs := d.Queries()
	for i, e := range exprs {
		if !strings.Contains(e, "redlock_") || !strings.Contains(e, `instance=~"$instance"`) {
			t.Errorf("panel %q: query %q reads no redlock metric of the chosen replicas", titles[i], e)
		}
	}
}
