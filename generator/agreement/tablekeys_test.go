package agreement_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/agreement"
)

// TestTableKeysCoverEveryDecodedTable derives the tables from the decoder's
// source: every list of keys the decoder checks a table against (the last
// argument of each d.unknown call) must be in TableKeys, under its name
// without "Keys", so that TestSchemaKeysMatchDecoder compares it with the
// schema. A new table, or a new key in any table, that the schema lacks
// then fails one of the two tests.
func TestTableKeysCoverEveryDecodedTable(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]string{} // list variable -> where it is checked
	listed := map[string]string{}  // TableKeys' name -> the variable it clones
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "unknown" || len(n.Args) == 0 {
					return true
				}
				id, ok := n.Args[len(n.Args)-1].(*ast.Ident)
				if !ok {
					t.Errorf("%s: unknown() is called with %T, not a list variable: name it NAMEKeys and add it to TableKeys", fset.Position(n.Pos()), n.Args[len(n.Args)-1])
					return true
				}
				checked[id.Name] = fset.Position(n.Pos()).String()
			case *ast.FuncDecl:
				if n.Name.Name == "TableKeys" {
					tableKeysLiteral(t, fset, n, listed)
				}
			}
			return true
		})
	}
	if len(checked) == 0 || len(listed) == 0 {
		t.Fatalf("found %d unknown() calls and %d TableKeys entries: did the decoder change shape?", len(checked), len(listed))
	}
	for name, v := range listed {
		if v != name+"Keys" {
			t.Errorf("TableKeys()[%q] is %s, want %sKeys", name, v, name)
		}
		if _, ok := checked[v]; !ok {
			t.Errorf("TableKeys()[%q]: the decoder checks no table against %s", name, v)
		}
	}
	var want []string
	for v, at := range checked {
		name, ok := strings.CutSuffix(v, "Keys")
		if !ok || listed[name] != v {
			t.Errorf("%s: the decoder checks a table against %s, which TableKeys does not return (add %q: clone(%s))", at, v, name, v)
		}
		want = append(want, name)
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(agreement.TableKeys()))); diff != "" {
		t.Errorf("tables the decoder checks vs. TableKeys() (-want,+got):\n%s", diff)
	}
}

// tableKeysLiteral reads TableKeys' map literal: "name": clone(variable).
func tableKeysLiteral(t *testing.T, fset *token.FileSet, fn *ast.FuncDecl, listed map[string]string) {
	ast.Inspect(fn, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		lit, ok := kv.Key.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		name, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		call, ok := kv.Value.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			t.Errorf("%s: TableKeys()[%q] is not clone(variable)", fset.Position(kv.Pos()), name)
			return false
		}
		id, ok := call.Args[0].(*ast.Ident)
		if !ok {
			t.Errorf("%s: TableKeys()[%q] is not clone(variable)", fset.Position(kv.Pos()), name)
			return false
		}
		listed[name] = id.Name
		return false
	})
}
