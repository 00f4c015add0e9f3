package history

import (
	"os"
	"path/filepath"
)

// Dir is where a failing run leaves its history: $REDLOCK_HISTORY_DIR, else
// the system's temporary directory (a test's own TempDir is deleted).
func Dir() string {
	if d := os.Getenv("REDLOCK_HISTORY_DIR"); d != "" {
		return d
	}
	return os.TempDir()
}

// Save writes ops as JSON lines to dir/name.jsonl and res's timeline to
// dir/name.html, and returns the JSON lines' path (replay it with
// `go run ./cmd/histcheck PATH`).
func Save(dir, name string, ops []Op, res Result) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := filepath.Join(dir, name)
	for _, part := range []struct {
		ext   string
		write func(*os.File) error
	}{
		{".jsonl", func(f *os.File) error { return Write(f, ops) }},
		{".html", func(f *os.File) error { return WriteHTML(f, ops, res) }},
	} {
		f, err := os.Create(base + part.ext)
		if err != nil {
			return "", err
		}
		err = part.write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", err
		}
	}
	return base + ".jsonl", nil
}
