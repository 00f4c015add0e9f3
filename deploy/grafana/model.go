package grafana

// The subset of Grafana's dashboard JSON model (schemaVersion 39) this
// dashboard uses, as typed structs: a field misspelt here is a compile error,
// not a panel Grafana silently ignores.

// Dashboard is a Grafana dashboard.
type Dashboard struct {
	UID           string      `json:"uid"`
	Title         string      `json:"title"`
	Description   string      `json:"description"`
	Tags          []string    `json:"tags"`
	Editable      bool        `json:"editable"`
	GraphTooltip  int         `json:"graphTooltip"` // 1: shared crosshair
	SchemaVersion int         `json:"schemaVersion"`
	Version       int         `json:"version"`
	Refresh       string      `json:"refresh"`
	Time          TimeRange   `json:"time"`
	Templating    Templating  `json:"templating"`
	Annotations   Annotations `json:"annotations"`
	Panels        []Panel     `json:"panels"`
}

// TimeRange is the dashboard's default time range.
type TimeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Annotations lists annotation queries (none here).
type Annotations struct {
	List []any `json:"list"`
}

// Templating holds the dashboard's variables.
type Templating struct {
	List []Variable `json:"list"`
}

// Variable is a dashboard variable: the data source, or a label's values.
type Variable struct {
	Name       string      `json:"name"`
	Label      string      `json:"label"`
	Type       string      `json:"type"` // "datasource" or "query"
	Query      any         `json:"query"`
	Datasource *Datasource `json:"datasource,omitempty"`
	Definition string      `json:"definition,omitempty"`
	Refresh    int         `json:"refresh,omitempty"` // 2: on time range change
	IncludeAll bool        `json:"includeAll"`
	Multi      bool        `json:"multi"`
	AllValue   string      `json:"allValue,omitempty"`
	Current    struct{}    `json:"current"`
}

// VariableQuery is a query variable's query.
type VariableQuery struct {
	Query string `json:"query"`
	RefID string `json:"refId"`
}

// Datasource names a data source (here always the $datasource variable).
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// GridPos places a panel on the 24-column grid.
type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// Panel is a row, a time series, a stat or a table.
type Panel struct {
	ID          int          `json:"id"`
	Type        string       `json:"type"`
	Title       string       `json:"title"`
	Description string       `json:"description,omitempty"`
	GridPos     GridPos      `json:"gridPos"`
	Datasource  *Datasource  `json:"datasource,omitempty"`
	Targets     []Target     `json:"targets,omitempty"`
	FieldConfig *FieldConfig `json:"fieldConfig,omitempty"`
	Options     any          `json:"options,omitempty"`
	Collapsed   *bool        `json:"collapsed,omitempty"` // rows only
	Panels      []Panel      `json:"panels,omitempty"`    // rows only (collapsed)
}

// Target is one PromQL query of a panel.
type Target struct {
	RefID        string      `json:"refId"`
	Datasource   *Datasource `json:"datasource"`
	Expr         string      `json:"expr"`
	LegendFormat string      `json:"legendFormat,omitempty"`
	Instant      bool        `json:"instant,omitempty"`
	Range        bool        `json:"range"`
	Format       string      `json:"format,omitempty"` // "table" for tables
}

// FieldConfig sets units, bounds, thresholds and value mappings.
type FieldConfig struct {
	Defaults  FieldDefaults `json:"defaults"`
	Overrides []any         `json:"overrides"`
}

// FieldDefaults applies to every field of a panel.
type FieldDefaults struct {
	Unit       string      `json:"unit,omitempty"`
	Min        *float64    `json:"min,omitempty"`
	Max        *float64    `json:"max,omitempty"`
	Decimals   *int        `json:"decimals,omitempty"`
	Thresholds *Thresholds `json:"thresholds,omitempty"`
	Mappings   []Mapping   `json:"mappings,omitempty"`
}

// Thresholds colour values by steps (the first step's Value is null).
type Thresholds struct {
	Mode  string `json:"mode"`
	Steps []Step `json:"steps"`
}

// Step is one threshold step.
type Step struct {
	Color string   `json:"color"`
	Value *float64 `json:"value"`
}

// Mapping maps values to text (type "value").
type Mapping struct {
	Type    string                  `json:"type"`
	Options map[string]MappingValue `json:"options"`
}

// MappingValue is what a mapped value shows.
type MappingValue struct {
	Text  string `json:"text"`
	Color string `json:"color"`
	Index int    `json:"index"`
}
