package grafana

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ds is every panel's and query's data source: the $datasource variable.
var ds = &Datasource{Type: "prometheus", UID: "${datasource}"}

// sel is a selector of metric on the chosen instances, with more matchers.
func sel(metric string, matchers ...string) string {
	return metric + "{" + strings.Join(append([]string{`instance=~"$instance"`}, matchers...), ",") + "}"
}

// rate is the per-second rate of a counter (or a histogram's series).
func rate(series string) string { return "rate(" + series + "[$__rate_interval])" }

// quantile is the q-quantile of histogram metric (its base name), by labels.
func quantile(q float64, metric, by string) string {
	return fmt.Sprintf("histogram_quantile(%g, sum by (%s) (%s))", q, strings.TrimPrefix(by+", le", ", "), rate(sel(metric+"_bucket")))
}

// q is a query with its legend.
func q(expr, legend string) Target { return Target{Expr: expr, LegendFormat: legend, Range: true} }

// layout places panels left to right on the 24-column grid, rows full width.
type layout struct {
	panels []Panel
	x, y   int
	rowH   int
	nextID int
}

func (l *layout) row(title string) {
	l.newLine()
	collapsed := false
	l.add(Panel{Type: "row", Title: title, Collapsed: &collapsed}, 24, 1)
}

func (l *layout) newLine() {
	if l.x > 0 {
		l.x, l.y = 0, l.y+l.rowH
	}
}

func (l *layout) add(p Panel, w, h int) {
	if l.x+w > 24 {
		l.newLine()
	}
	l.nextID++
	p.ID = l.nextID
	p.GridPos = GridPos{H: h, W: w, X: l.x, Y: l.y}
	if p.Type != "row" {
		p.Datasource = ds
		for i := range p.Targets {
			p.Targets[i].RefID = string(rune('A' + i))
			p.Targets[i].Datasource = ds
		}
		if p.FieldConfig == nil {
			p.FieldConfig = &FieldConfig{}
		}
		if p.FieldConfig.Overrides == nil {
			p.FieldConfig.Overrides = []any{}
		}
	}
	l.panels = append(l.panels, p)
	l.x += w
	l.rowH = h
	if l.x >= 24 {
		l.newLine()
	}
}

// graph adds a time series panel of width w.
func (l *layout) graph(title, desc, unit string, w int, targets ...Target) {
	l.add(Panel{Type: "timeseries", Title: title, Description: desc, Targets: targets,
		FieldConfig: &FieldConfig{Defaults: FieldDefaults{Unit: unit}}}, w, 8)
}

// stat adds a stat panel showing the last value, coloured by thresholds.
func (l *layout) stat(title, desc string, w int, fc FieldDefaults, targets ...Target) {
	l.add(Panel{Type: "stat", Title: title, Description: desc, Targets: targets, FieldConfig: &FieldConfig{Defaults: fc},
		Options: map[string]any{"reduceOptions": map[string]any{"calcs": []string{"lastNotNull"}, "fields": "", "values": false},
			"colorMode": "background", "graphMode": "none", "textMode": "auto"}}, w, 4)
}

// Queries lists every panel's PromQL, with the panel's title.
func (d *Dashboard) Queries() (titles, exprs []string) {
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				titles, exprs = append(titles, p.Title), append(exprs, t.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return titles, exprs
}

// JSON is the dashboard as committed: indented, with a final newline.
func (d *Dashboard) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func ptr[T any](v T) *T { return &v }

// thresholds is green below warn, red from it.
func thresholds(base string, steps ...any) *Thresholds {
	t := &Thresholds{Mode: "absolute", Steps: []Step{{Color: base}}}
	for i := 0; i+1 < len(steps); i += 2 {
		t.Steps = append(t.Steps, Step{Value: ptr(steps[i].(float64)), Color: steps[i+1].(string)})
	}
	return t
}
