package load_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/tenancy-dev/tenancy/generator/internal/examples"
	"github.com/tenancy-dev/tenancy/generator/internal/goldentest"
	"github.com/tenancy-dev/tenancy/generator/load"
	"github.com/tenancy-dev/tenancy/generator/synthetic"
)

// goTOMLAccepts is the verdict load.Accepts must equal: go-toml's decoder's,
// into a map as the loader's judge decodes.
func goTOMLAccepts(data []byte) bool {
	var doc map[string]any
	return toml.Unmarshal(data, &doc) == nil
}

// tableRules are documents written for go-toml's key rules, each with
// go-toml's verdict, so that the case tests what its name says.
var tableRules = []struct {
	name  string
	src   string
	valid bool
}{
	{"a table defined twice", "[a]\n[a]\n", false},
	{"a super-table after its sub-table", "[a.b]\n[a]\n", true},
	{"a super-table after its sub-table, twice", "[a.b]\n[a]\n[a]\n", false},
	{"super-tables after sub-tables, deepest first", "[a.b.c]\n[a.b]\n[a]\n", true},
	{"a header reopening a table dotted keys defined", "[a]\nb.c = 1\n[a.b]\n", false},
	{"a header crossing a table dotted keys defined", "[a]\nb.c = 1\n[a.b.d]\n", true},
	{"a header crossing a table dotted keys defined, later", "[a]\nx.y = 1\n[b]\n[a.x.z]\n", true},
	{"a header naming a dotted-key table at the root", "a.b.c = 1\n[a]\n", false},
	{"dotted keys extending a table a header defined", "[a.b]\nx = 1\n[a]\nb.y = 2\n", false},
	{"dotted keys extending a table a sub-header made implicit", "[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n", false},
	{"an array of tables reopened as a table", "[[a]]\n[a]\n", false},
	{"a table reopened as an array of tables", "[a]\n[[a]]\n", false},
	{"an implicit table reopened as an array of tables", "[[a.b]]\n[[a]]\n", false},
	{"each element of an array of tables has its keys anew", "[[a]]\nb = 1\n[[a]]\nb = 2\n", true},
	{"each element of an array of tables has its sub-tables anew", "[[a]]\n[a.b]\n[[a]]\n[a.b]\n", true},
	{"a sub-table of an element defined twice", "[[a]]\n[a.b]\n[a.b]\n", false},
	{"a sub-table of an element, across two elements, then twice", "[[a]]\n[[a]]\n[a.b]\nc = 1\n[a.b]\n", false},
	{"nested arrays of tables", "[[a]]\n[[a.b]]\nc = 1\n[[a]]\n[[a.b]]\nc = 1\n", true},
	{"dotted keys in each element of an array of tables", "[[a]]\nb.c = 1\n[[a]]\nb.c = 1\n", true},
	{"an array of tables reopened as a sub-table", "[a]\n[[a.b]]\n[a.b]\n", false},
	{"a static array extended by an array of tables", "a = [1]\n[[a]]\n", false},
	{"a static array of tables extended by a header", "a = [{ b = 1 }]\n[a.c]\n", false},
	{"an inline table reopened by a header", "a = { b = 1 }\n[a]\n", false},
	{"an inline table extended by a dotted key", "a = { b = 1 }\na.c = 2\n", false},
	{"an inline table extended by a sub-table", "a = { b = 1 }\n[a.c]\n", false},
	{"a value crossed by a header", "[a]\nb = 1\n[a.b.c]\n", false},
	{"a value named by a header", "[a]\nb = 1\n[a.b]\n", false},
	{"dotted keys sharing a table", "a.b = 1\na.c = 2\n", true},
	{"a dotted key through a value", "a.b = 1\na.b.c = 2\n", false},
	{"a dotted key through a scalar", "a = 1\na.b = 2\n", false},
	{"a key defined twice", "a = 1\na = 2\n", false},
	{"a key defined again after another table", "[a]\nb = 1\n[c]\n[a]\nb = 2\n", false},
	{"dotted keys inside an inline table", "x = { a.b = 1, a.c = 2 }\n", true},
	{"an inline table's dotted key then its value", "x = { a.b = 1, a = 2 }\n", false},
	{"an inline table's nested inline table extended", "x = { a = { b = 1 }, a.c = 2 }\n", false},
	{"an inline table in an array with a key twice", "x = [{ a = 1, a = 2 }]\n", false},
	{"inline tables in an array, each its own scope", "x = [{ a = 1 }, { a = 2 }]\n", true},
	{"inline tables in nested arrays", "x = [[{ a = 1 }], [{ a = 1, b = 1 }]]\n", true},
	{"an inline table in nested arrays with a key twice", "x = [[{ a = 1, a = 1 }]]\n", false},
	{"arrays and inline tables mixed", "a = [[1], { b = 1 }]\n", true},
	{"quoted and bare keys are the same key", "\"a\" = 1\na = 2\n", false},
	{"an escaped key is its character", "\"\\u0061\" = 1\na = 2\n", false},
	{"a quoted dot is part of the key", "'a.b' = 1\na.b = 2\n", true},
	{"empty quoted keys", "'' = 1\n\"\" = 2\n", false},
	{"an empty quoted table name", "[a]\n[a.'']\n", true},
	{"CRLF line ends", "a = 1\r\n[b]\r\nc = 2\r\n", true},
	{"the largest integer", "a = 9223372036854775807\n", true},
	{"the smallest integer", "a = -9223372036854775808\n", true},
	{"an integer one past the largest", "a = 9223372036854775808\n", false},
	{"a hexadecimal integer past the largest", "a = 0xFFFFFFFFFFFFFFFF\n", false},
	{"an integer out of range inside an array", "a = [1, 2, 99999999999999999999]\n", false},
	{"an integer out of range inside an inline table in an array", "a = [{ b = 99999999999999999999 }]\n", false},
	{"a date that does not exist", "a = 1979-02-30\n", false},
	{"a date that does not exist inside an inline table", "a = { b = 1979-13-01 }\n", false},
	{"an hour past 23", "a = 1979-02-28T25:00:00Z\n", false},
	{"a local time past 23", "a = 24:00:00\n", false},
	{"a float past the largest", "a = 1e400\n", false},
	{"the same scalars many times", "a = [1, 1, 1, 1.5, 1.5]\nb = 1\nc = 1979-05-27\nd = 1979-05-27\n", true},
}

// tomlTestCase is one document of the toml-test suite as go-toml's own
// tests embed it (toml_testgen_test.go), copied to testdata/toml-test.json.
type tomlTestCase struct {
	Name  string `json:"name"`
	Valid bool   `json:"valid"`
	TOML  string `json:"toml"`
}

const corpusFile = "testdata/toml-test.json"

func readTOMLTest(t testing.TB) []tomlTestCase {
	t.Helper()
	data, err := os.ReadFile(corpusFile)
	if err != nil {
		t.Fatal(err)
	}
	var cases []tomlTestCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// repositoryTOML returns every .toml file of the repository, by path.
func repositoryTOML(t testing.TB) map[string][]byte {
	t.Helper()
	root := examples.Root(t)
	var paths []string
	walk := func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case strings.HasSuffix(path, ".toml") && !d.IsDir():
			paths = append(paths, path)
		}
		return nil
	}
	if err := filepath.WalkDir(root, walk); err != nil {
		t.Fatal(err)
	}
	if len(paths) < 50 {
		t.Fatalf("found %d .toml files in the repository, want every example and testdata agreement", len(paths))
	}
	files := map[string][]byte{}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		files[rel] = data
	}
	return files
}

// TestTOMLTestCorpusIsGoTOMLs holds testdata/toml-test.json to the
// documents go-toml's tests embed, in the module cache when it is there
// (-update rewrites the copy): the copy keeps the proof running in CI
// without depending on the module cache's layout.
func TestTOMLTestCorpusIsGoTOMLs(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/pelletier/go-toml/v2").Output()
	if err != nil {
		t.Skipf("SKIP: cannot locate go-toml in the module cache (go list: %v); testdata/toml-test.json is not compared with its source", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "toml_testgen_test.go")
	file, err := parser.ParseFile(token.NewFileSet(), src, nil, 0)
	if err != nil {
		t.Skipf("SKIP: cannot read go-toml's toml-test cases (%v); testdata/toml-test.json is not compared with its source", err)
	}
	var cases []tomlTestCase
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || !strings.HasPrefix(fn.Name.Name, "TestTOMLTest_") {
			continue
		}
		c := tomlTestCase{Name: strings.TrimPrefix(fn.Name.Name, "TestTOMLTest_")}
		input := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if id, ok := n.Lhs[0].(*ast.Ident); ok && id.Name == "input" {
					lit := n.Rhs[0].(*ast.BasicLit)
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatalf("%s: %v", fn.Name.Name, err)
					}
					c.TOML, input = s, true
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok {
					c.Valid = c.Valid || id.Name == "testgenValid"
				}
			}
			return true
		})
		if !input {
			t.Fatalf("%s: no input found", fn.Name.Name)
		}
		cases = append(cases, c)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	if len(cases) < 500 {
		t.Fatalf("read %d toml-test cases from %s, want the whole suite", len(cases), src)
	}
	got, err := json.MarshalIndent(cases, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	goldentest.Compare(t, corpusFile, append(got, '\n'), "go test ./generator/load -run TestTOMLTestCorpusIsGoTOMLs -update")
}

// TestJudgeEqualsGoTOML holds the linear verdict to go-toml's decoder on
// the toml-test suite, every .toml of the repository and the table rules.
func TestJudgeEqualsGoTOML(t *testing.T) {
	check := func(t *testing.T, data []byte) bool {
		t.Helper()
		want := goTOMLAccepts(data)
		if got := load.Accepts(data); got != want {
			t.Errorf("Accepts = %v, go-toml's decoder accepts = %v, for:\n%s", got, want, data)
		}
		return want
	}
	t.Run("toml-test", func(t *testing.T) {
		valid, invalid := 0, 0
		for _, c := range readTOMLTest(t) {
			if check(t, []byte(c.TOML)) {
				valid++
			} else {
				invalid++
			}
		}
		if valid < 200 || invalid < 300 {
			t.Errorf("go-toml accepts %d and refuses %d documents of the suite, want both kinds", valid, invalid)
		}
	})
	t.Run("repository", func(t *testing.T) {
		for path, data := range repositoryTOML(t) {
			t.Run(path, func(t *testing.T) { check(t, data) })
		}
	})
	for _, tc := range tableRules {
		t.Run(tc.name, func(t *testing.T) {
			if got := check(t, []byte(tc.src)); got != tc.valid {
				t.Errorf("go-toml's decoder accepts = %v, the case says %v", got, tc.valid)
			}
		})
	}
	t.Run("10,000 teams", func(t *testing.T) {
		if !load.Accepts(synthetic.Agreement(10000)) {
			t.Error("the synthetic agreement of 10,000 teams is not accepted")
		}
	})
}

// shortLines are the lines TestJudgeEqualsGoTOMLOnShortDocuments combines:
// headers, arrays of tables, dotted keys, inline tables and arrays over two
// names, so that every pair of the tracker's kinds meets in every order.
var shortLines = []string{
	"[a]", "[a.b]", "[a.b.c]", "[b]", "[[a]]", "[[a.b]]", "[[b]]",
	"a = 1", "b = 1", "a.b = 1", "a.b.c = 1", "b.c = 1",
	"a = { b = 1 }", "b = { c.d = 1 }", "a = [{ b = 1 }]", "c = [1]",
}

// TestJudgeEqualsGoTOMLOnShortDocuments holds the linear verdict to
// go-toml's decoder on every document of up to four shortLines (69,904
// documents): the key rules, exhaustively over small documents.
func TestJudgeEqualsGoTOMLOnShortDocuments(t *testing.T) {
	n, accepted := 0, 0
	var walk func(doc string, depth int)
	walk = func(doc string, depth int) {
		data := []byte(doc)
		want := goTOMLAccepts(data)
		if got := load.Accepts(data); got != want {
			t.Errorf("Accepts = %v, go-toml's decoder accepts = %v, for:\n%s", got, want, doc)
		}
		n++
		if want {
			accepted++
		}
		if depth == 4 {
			return
		}
		for _, line := range shortLines {
			walk(doc+line+"\n", depth+1)
		}
	}
	walk("", 0)
	if n != 69905 || accepted == 0 || accepted == n {
		t.Errorf("%d documents, %d accepted; want 69,905 (the empty one too), both verdicts", n, accepted)
	}
}

// FuzzJudgeEqualsGoTOML holds the linear verdict to go-toml's decoder on
// arbitrary bytes, seeded with every document of TestJudgeEqualsGoTOML.
func FuzzJudgeEqualsGoTOML(f *testing.F) {
	for _, c := range readTOMLTest(f) {
		f.Add([]byte(c.TOML))
	}
	for _, data := range repositoryTOML(f) {
		f.Add(data)
	}
	for _, tc := range tableRules {
		f.Add([]byte(tc.src))
	}
	for i, a := range shortLines {
		f.Add([]byte(a + "\n" + shortLines[(i+5)%len(shortLines)] + "\n" + a + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := load.Accepts(data), goTOMLAccepts(data); got != want {
			t.Errorf("Accepts = %v, go-toml's decoder accepts = %v", got, want)
		}
	})
}

// BenchmarkJudge10000Teams is the verdict on the synthetic agreement of
// 10,000 teams: go-toml's decoder, as the loader asked before, and the
// linear verdict it asks now.
func BenchmarkJudge10000Teams(b *testing.B) {
	data := synthetic.Agreement(10000)
	b.Run("go-toml", func(b *testing.B) {
		for b.Loop() {
			if !goTOMLAccepts(data) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("linear", func(b *testing.B) {
		for b.Loop() {
			if !load.Accepts(data) {
				b.Fatal("refused")
			}
		}
	})
}
