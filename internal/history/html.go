package history

import (
	"fmt"
	"html"
	"io"
	"sort"
	"time"
)

// WriteHTML writes a self-contained page (inline SVG, no scripts) with the
// verdict, each anomaly, and for each key with an anomaly a timeline around
// it: one row per owner, each op as a bar from Invoke to Return coloured by
// outcome, each certain window as a green band, the anomaly's ops in red.
func WriteHTML(w io.Writer, ops []Op, res Result) error {
	p := &printer{w: w}
	p.f("<!doctype html><meta charset=utf-8><title>history check</title><style>body{font:13px monospace}"+
		"li{margin:2px 0}</style><h1>%s</h1><ol>", html.EscapeString(res.Verdict()))
	for _, a := range res.Anomalies {
		p.f("<li>%s</li>", html.EscapeString(a.String()))
	}
	p.f("</ol>")
	byKey := map[string][]Anomaly{}
	for _, a := range res.Anomalies {
		byKey[a.Key] = append(byKey[a.Key], a)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		p.timeline(ops, key, byKey[key])
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

var colour = map[Outcome]string{OK: "#2a7", Taken: "#999", NotHeld: "#c80", Unknown: "#77c"}

// timeline draws key's ops within a second of its anomalies' ops.
func (p *printer) timeline(ops []Op, key string, as []Anomaly) {
	red := map[int]bool{}
	from, to := time.Duration(1<<62), time.Duration(0)
	for _, a := range as {
		for _, i := range a.Ops {
			red[i] = true
			from, to = min(from, ops[i].Invoke), max(to, ops[i].Return)
		}
	}
	from, to = from-time.Second, to+time.Second
	var idx []int
	rows := map[string]int{}
	var owners []string
	for i, op := range ops {
		if op.Key == key && op.Return >= from && op.Invoke <= to {
			idx = append(idx, i)
			if _, ok := rows[op.Owner]; !ok {
				rows[op.Owner] = len(owners)
				owners = append(owners, op.Owner)
			}
		}
	}
	const width, left, rowH = 1400.0, 160.0, 14
	x := func(t time.Duration) float64 {
		t = max(from, min(to, t))
		return left + (width-left)*float64(t-from)/float64(to-from)
	}
	p.f("<h2>%s, %s to %s</h2><svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%d'>",
		html.EscapeString(key), d(from), d(to), width, rowH*(len(owners)+1))
	for r, o := range owners {
		p.f("<text x='0' y='%d' font-size='11'>%s</text>", rowH*(r+1)-3, html.EscapeString(o))
	}
	k := newKeyHistory(ops, key, idx)
	for _, w := range k.windows {
		y := rowH*rows[k.holds[w.hold].owner] + 1
		p.f("<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='#bfb'><title>window %s to %s</title></rect>",
			x(w.start), y, max(1, x(w.end)-x(w.start)), rowH-2, d(w.start), endString(w.end))
	}
	for _, i := range idx {
		op := ops[i]
		stroke := ""
		if red[i] {
			stroke = " stroke='red' stroke-width='2'"
		}
		p.f("<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='%s'%s><title>#%d %s %s %s ttl %s token %d [%s, %s] %s</title></rect>",
			x(op.Invoke), rowH*rows[op.Owner]+4, max(2, x(op.Return)-x(op.Invoke)), rowH-8, colour[op.Outcome], stroke,
			i, op.Kind, op.Owner, op.Outcome, op.TTL, op.Token, d(op.Invoke), d(op.Return), html.EscapeString(op.Error))
	}
	p.f("</svg>")
}
