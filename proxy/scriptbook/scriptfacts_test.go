package scriptbook

import (
	"reflect"
	"strings"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/internal/transcript"
)

// TestScriptFactsRecorded: every row of scriptFacts that names a transcript
// is called in it (by its text or by EVALSHA), and where the transcript
// carries the text, the text hashes to the row's normalised digest; a row
// seen "source" is called in no transcript (else it would name it). Every
// script a transcript calls is known (a row, a read-write lock script, or
// a refused family's), and every text a transcript carries, and a variant
// of it in other spacing and comments, is recognised as its row.
func TestScriptFactsRecorded(t *testing.T) {
	all, err := transcript.LoadDir("../../compat/transcripts")
	if err != nil {
		t.Fatal(err)
	}
	calledIn := map[string][]string{}
	texts := map[string]string{}
	for name, tr := range all {
		ts, called := tr.Scripts()
		for sha := range called {
			calledIn[sha] = append(calledIn[sha], name)
		}
		for sha, text := range ts {
			texts[sha] = text
		}
	}
	seen := map[string]bool{}
	for _, f := range scriptFacts {
		if seen[f.sha] {
			t.Errorf("%s: two rows", f.sha)
		}
		seen[f.sha] = true
		if f.seen == "source" {
			if len(calledIn[f.sha]) > 0 {
				t.Errorf("%s (%s %s) is seen \"source\" but recorded in %v", f.sha, f.client, f.versions, calledIn[f.sha])
			}
			continue
		}
		tr := all[f.seen]
		if tr == nil {
			t.Errorf("%s (%s): no transcript %q", f.sha, f.client, f.seen)
			continue
		}
		if _, called := tr.Scripts(); !called[f.sha] {
			t.Errorf("%s (%s): not called in %s", f.sha, f.client, f.seen)
		}
		if text, ok := texts[f.sha]; ok && SHA1Hex(normalizeScript(text)) != f.norm {
			t.Errorf("%s (%s): normalised digest %s, the row says %q", f.sha, f.client, SHA1Hex(normalizeScript(text)), f.norm)
		}
	}
	var r Registry
	for sha, names := range calledIn {
		if _, _, ok := r.Recognise("", texts[sha]); Book[sha] == nil && RefusedAcquires[sha] == "" && !ok {
			t.Errorf("%s, called in %v, is not known", sha, names)
		}
	}
	for sha, text := range texts {
		want := Book[sha]
		if want == nil { // a hand-typed form
			_, want, _ = r.Recognise("", text)
		}
		for _, variant := range []string{text, "-- a copy\n" + strings.ReplaceAll(text, "\n", " \n\t") + " ;\n"} {
			got, sp, ok := r.Recognise("", variant)
			if !ok || want == nil || !reflect.DeepEqual(sp, want) {
				t.Errorf("%s's text (as %s) recognised as %v, %v; want its row's %v", sha, got, sp, ok, want)
			}
		}
	}
}

// TestScriptFactsAgree: rows that share a normalised text share their
// meaning and layout, so a variant of either is served alike.
func TestScriptFactsAgree(t *testing.T) {
	for _, a := range scriptFacts {
		if b := byNorm[a.norm]; a.norm != "" && !reflect.DeepEqual(Book[a.sha], Book[b]) {
			t.Errorf("%s and %s share a normalised text but not their layout: %+v, %+v", a.sha, b, *Book[a.sha], *Book[b])
		}
	}
}
