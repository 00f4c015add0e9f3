package proxy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// coreFiles are the server core's: accept, read, admit, dispatch, write,
// limits, auth, and the types they share (doc.go).
var coreFiles = []string{"server.go", "conn.go", "admit.go", "state.go", "request.go",
	"keys.go", "reserved.go", "selectdb.go", "families.go", "errors.go", "args.go", "limits.go", "options.go",
	"refusals.go", "users.go", "authguard.go", "hangup.go", "grants.go", "panics.go", "quota.go", "metrics.go", "metricnames.go"}

// The core names no command: what it needs to know of one (arity, flags,
// where its keys and channels are) is in its entry of the table, so that a
// command is added to its family and the table only.
func TestCoreNamesNoCommand(t *testing.T) {
	table := New(nil).commandTable()
	fset := token.NewFileSet()
	for _, name := range coreFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		check := func(e ast.Expr) {
			lit, ok := e.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return
			}
			if v, err := strconv.Unquote(lit.Value); err == nil && table[strings.ToLower(v)] != nil {
				t.Errorf("%s compares with command %q", fset.Position(lit.Pos()), v)
			}
		}
		// Where code tells one command from another: a comparison, a
		// switch case, a map lookup or a case-insensitive match.
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					check(n.X)
					check(n.Y)
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					check(e)
				}
			case *ast.IndexExpr:
				check(n.Index)
			case *ast.KeyValueExpr:
				check(n.Key)
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "equalFold" {
					for _, a := range n.Args {
						check(a)
					}
				}
			}
			return true
		})
	}
}
