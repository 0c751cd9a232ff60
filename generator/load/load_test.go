package load_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
	"github.com/tenancy-dev/tenancy/generator/load"
)

// loadErr is the error diagnostic Parse reports for tenancy.toml.
func loadErr(line, col int, path string, typ field.ErrorType) diag.Diagnostic {
	return diagtest.Error("tenancy.toml", line, col, path, typ)
}

func TestParseErrors(t *testing.T) {
	tests := map[string]struct {
		src  string
		want diag.List
	}{
		"valid document": {
			src: "version = 1\n[teams.a]\nguaranteed = 8\n",
		},
		// The TOML specification's own INVALID example, and two more the
		// loader's table rules once let through: go-toml's decoder refuses
		// them, so tenancy does.
		"spec: a table defined by dotted keys cannot be reopened by a header": {
			src:  "[fruit]\napple.color = \"red\"\n[fruit.apple]\n",
			want: diag.List{loadErr(3, 2, "", field.ErrorTypeInvalid)},
		},
		"a header cannot reopen a table a dotted key defined at the root": {
			src:  "a.b.c = 1\n[a.b]\n",
			want: diag.List{loadErr(2, 2, "", field.ErrorTypeInvalid)},
		},
		"a dotted key cannot extend a table a header defined": {
			src:  "[a.b]\nx = 1\n[a]\nb.y = 2\n",
			want: diag.List{loadErr(4, 1, "", field.ErrorTypeInvalid)},
		},
		"unclosed table header": {
			src:  "version = 1\n[flavors.h100\ncapacity = 32\n",
			want: diag.List{loadErr(2, 14, "", field.ErrorTypeInvalid)},
		},
		"missing value": {
			src:  "version = 1\nname =\n",
			want: diag.List{loadErr(2, 7, "", field.ErrorTypeInvalid)},
		},
		"unterminated string": {
			src:  "version = 1\n\nname = \"pool\n",
			want: diag.List{loadErr(3, 13, "", field.ErrorTypeInvalid)},
		},
		"bare word value": {
			src:  "[teams.a]\nreclaim = wait\n",
			want: diag.List{loadErr(2, 11, "", field.ErrorTypeInvalid)},
		},
		"key defined twice": {
			src:  "version = 1\nname = \"a\"\nname = \"b\"\n",
			want: diag.List{loadErr(3, 1, "name", field.ErrorTypeDuplicate)},
		},
		"key defined twice in a table": {
			src:  "[teams.a]\nguaranteed = 8\n\nguaranteed = 9\n",
			want: diag.List{loadErr(4, 1, "teams.a.guaranteed", field.ErrorTypeDuplicate)},
		},
		"table defined twice": {
			src:  "[flavors.h100]\ncapacity = 32\n[flavors.h100]\ncapacity = 3\n",
			want: diag.List{loadErr(3, 10, "flavors.h100", field.ErrorTypeDuplicate)},
		},
		"a byte order mark is skipped; columns count after it": {
			src:  "\ufeffname = 1\nname = 2\n",
			want: diag.List{loadErr(2, 1, "name", field.ErrorTypeDuplicate)},
		},
		"a byte order mark is skipped on the first line's columns": {
			src:  "\ufeffname = \"p\n",
			want: diag.List{loadErr(1, 10, "", field.ErrorTypeInvalid)},
		},
		"a byte order mark later is not": {
			src:  "name = 1\n\ufeffx = 2\n",
			want: diag.List{loadErr(2, 1, "", field.ErrorTypeInvalid)},
		},
		"CRLF line endings": {
			src:  "name = 1\r\nname = 2\r\n",
			want: diag.List{loadErr(2, 1, "name", field.ErrorTypeDuplicate)},
		},
		"table header after an implicit one is fine": {
			src: "[teams.a.flavors.h100]\nguaranteed = 1\n[teams.a]\nweight = 2\n",
		},
		"table over a value": {
			src:  "teams = 1\n[teams.a]\nguaranteed = 1\n",
			want: diag.List{loadErr(2, 2, "teams", field.ErrorTypeDuplicate)},
		},
		"header names a value": {
			src:  "name = \"a\"\n[name]\n",
			want: diag.List{loadErr(2, 2, "name", field.ErrorTypeDuplicate)},
		},
		"dotted key over a value": {
			src:  "[flavors.h100]\ncapacity = 1\ncapacity.max = 2\n",
			want: diag.List{loadErr(3, 1, "flavors.h100.capacity", field.ErrorTypeDuplicate)},
		},
		"extending an inline table": {
			src:  "[flavors.h100]\nnode_labels = { a = \"b\" }\n[flavors.h100.node_labels]\nc = \"d\"\n",
			want: diag.List{loadErr(3, 15, "flavors.h100.node_labels", field.ErrorTypeDuplicate)},
		},
		"dotted key into an inline table": {
			src:  "[flavors.h100]\nnode_labels = { a = \"b\" }\nnode_labels.c = \"d\"\n",
			want: diag.List{loadErr(3, 1, "flavors.h100.node_labels", field.ErrorTypeForbidden)},
		},
		"array of tables after a static array": {
			src:  "[flavors.h100]\ntolerations = []\n[[flavors.h100.tolerations]]\nkey = \"a\"\n",
			want: diag.List{loadErr(3, 16, "flavors.h100.tolerations", field.ErrorTypeDuplicate)},
		},
		"duplicate key inside an inline table": {
			src:  "[flavors.h100]\nnode_labels = { a = \"b\", a = \"c\" }\n",
			want: diag.List{loadErr(2, 26, "flavors.h100.node_labels.a", field.ErrorTypeDuplicate)},
		},
		"several structure errors are all reported": {
			src: "name = \"a\"\nname = \"b\"\n[teams.a]\nweight = 1\n[teams.a]\n",
			want: diag.List{
				loadErr(2, 1, "name", field.ErrorTypeDuplicate),
				loadErr(5, 8, "teams.a", field.ErrorTypeDuplicate),
			},
		},
		"integer out of range in an array": {
			src:  "[teams.a]\nnamespaces  =\t[ \"a\", 1_000_000_000_000_000_000_000 ]\n",
			want: diag.List{loadErr(2, 22, "teams.a.namespaces[1]", field.ErrorTypeInvalid)},
		},
		"integer out of range": {
			src:  "[teams.a]\nguaranteed = 9223372036854775808\n",
			want: diag.List{loadErr(2, 14, "teams.a.guaranteed", field.ErrorTypeInvalid)},
		},
		"syntax error after a structure error": {
			src: "name = \"a\"\nname = \"b\"\n[teams\n",
			want: diag.List{
				loadErr(2, 1, "name", field.ErrorTypeDuplicate),
				loadErr(3, 7, "", field.ErrorTypeInvalid),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, got := load.Parse("tenancy.toml", []byte(tc.src))
			if diff := diagtest.Diff(t, tc.want, got); diff != "" {
				t.Errorf("Parse diagnostics (-want,+got):\n%s", diff)
			}
		})
	}
}

// flatten lists every value of a parsed document as "path kind key@line:col
// value@line:col = scalar", in document order, so a test can compare the
// whole tree at once.
func flatten(v *load.Value) []string {
	var out []string
	var walk func(path string, v *load.Value)
	walk = func(path string, v *load.Value) {
		line := fmt.Sprintf("%s %s key@%d:%d value@%d:%d", path, v.Kind, v.KeyPos.Line, v.KeyPos.Column, v.Pos.Line, v.Pos.Column)
		switch v.Kind {
		case load.String:
			line += fmt.Sprintf(" = %q", v.Str)
		case load.Integer:
			line += fmt.Sprintf(" = %d", v.Int)
		case load.Float:
			line += fmt.Sprintf(" = %v", v.Float)
		case load.Bool:
			line += fmt.Sprintf(" = %v", v.Bool)
		case load.DateTime:
			line += " = " + v.Raw
		}
		out = append(out, line)
		switch v.Kind {
		case load.Table:
			for _, k := range v.Table.Keys {
				walk(path+"."+k, v.Table.Values[k])
			}
		case load.Array:
			for i, item := range v.Items {
				walk(fmt.Sprintf("%s[%d]", path, i), item)
			}
		}
	}
	walk("", v)
	return out
}

func TestParseTree(t *testing.T) {
	src := strings.Join([]string{
		`version = 1`,                // 1
		`name = "pool" # the cohort`, // 2
		``,                           // 3
		`[flavors.h100]`,             // 4
		`capacity = 0x20`,            // 5
		`ratio = 1_000.5`,            // 6
		`node_labels = { "a.io/b" = "c", d.e = "f" }`, // 7
		`[[flavors.h100.tolerations]]`,                // 8
		`key = "k"`,                                   // 9
		`[[flavors.h100.tolerations]]`,                // 10
		`operator = "Exists"`,                         // 11
		`[teams.a]`,                                   // 12
		`namespaces = ["a", 'b']`,                     // 13: go-toml gives arrays no position
		`enabled = true`,                              // 14
		`since = 2026-01-02`,                          // 15
		`flavors.h100.guaranteed = 8`,                 // 16
		`[teams.a.x]`,                                 // 17
		`big = -9_223_372_036_854_775_808`,            // 18
		`nested = [ 1, # one`,                         // 19
		`  [2, [3]], [4] ]`,                           // 20: after an array, the outer start
	}, "\n")
	root, diags := load.Parse("tenancy.toml", []byte(src))
	if len(diags) > 0 {
		t.Fatalf("Parse: unexpected diagnostics:\n%s", diags)
	}
	want := []string{
		` table key@1:1 value@1:1`,
		`.version integer key@1:1 value@1:11 = 1`,
		`.name string key@2:1 value@2:8 = "pool"`,
		`.flavors table key@4:2 value@4:2`,
		`.flavors.h100 table key@4:10 value@4:10`,
		`.flavors.h100.capacity integer key@5:1 value@5:12 = 32`,
		`.flavors.h100.ratio float key@6:1 value@6:9 = 1000.5`,
		`.flavors.h100.node_labels table key@7:1 value@7:15`,
		`.flavors.h100.node_labels.a.io/b string key@7:17 value@7:28 = "c"`,
		`.flavors.h100.node_labels.d table key@7:33 value@7:33`,
		`.flavors.h100.node_labels.d.e string key@7:35 value@7:39 = "f"`,
		`.flavors.h100.tolerations array key@8:16 value@8:16`,
		`.flavors.h100.tolerations[0] table key@8:16 value@8:16`,
		`.flavors.h100.tolerations[0].key string key@9:1 value@9:7 = "k"`,
		`.flavors.h100.tolerations[1] table key@10:16 value@10:16`,
		`.flavors.h100.tolerations[1].operator string key@11:1 value@11:12 = "Exists"`,
		`.teams table key@12:2 value@12:2`,
		`.teams.a table key@12:8 value@12:8`,
		`.teams.a.namespaces array key@13:1 value@13:14`,
		`.teams.a.namespaces[0] string key@13:15 value@13:15 = "a"`,
		`.teams.a.namespaces[1] string key@13:20 value@13:20 = "b"`,
		`.teams.a.enabled boolean key@14:1 value@14:11 = true`,
		`.teams.a.since date-time key@15:1 value@15:9 = 2026-01-02`,
		`.teams.a.flavors table key@16:1 value@16:1`,
		`.teams.a.flavors.h100 table key@16:9 value@16:9`,
		`.teams.a.flavors.h100.guaranteed integer key@16:14 value@16:27 = 8`,
		`.teams.a.x table key@17:10 value@17:10`,
		fmt.Sprintf(`.teams.a.x.big integer key@18:1 value@18:7 = %d`, int64(math.MinInt64)),
		`.teams.a.x.nested array key@19:1 value@19:10`,
		`.teams.a.x.nested[0] integer key@19:12 value@19:12 = 1`,
		`.teams.a.x.nested[1] array key@20:3 value@20:3`,
		`.teams.a.x.nested[1][0] integer key@20:4 value@20:4 = 2`,
		`.teams.a.x.nested[1][1] array key@20:7 value@20:7`,
		`.teams.a.x.nested[1][1][0] integer key@20:8 value@20:8 = 3`,
		`.teams.a.x.nested[2] array key@19:10 value@19:10`,
		`.teams.a.x.nested[2][0] integer key@20:14 value@20:14 = 4`,
	}
	if diff := cmp.Diff(want, flatten(root)); diff != "" {
		t.Errorf("parsed tree (-want,+got):\n%s", diff)
	}

	if diff := cmp.Diff([]string{"flavors", "name", "teams", "version"}, root.Table.SortedKeys()); diff != "" {
		t.Errorf("SortedKeys (-want,+got):\n%s", diff)
	}
}

// TestParseFloats covers the special float spellings TOML allows; decode
// rejects them for counts, but the loader must read them without failing.
func TestParseFloats(t *testing.T) {
	tests := map[string]struct {
		src  string
		want float64
	}{
		"inf":       {src: "x = inf", want: math.Inf(1)},
		"minus inf": {src: "x = -inf", want: math.Inf(-1)},
		"exponent":  {src: "x = 8e0", want: 8},
		"signed":    {src: "x = +8.0", want: 8},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root, diags := load.Parse("tenancy.toml", []byte(tc.src))
			if len(diags) > 0 {
				t.Fatalf("Parse: %s", diags)
			}
			x := root.Table.Get("x")
			if x.Kind != load.Float || x.Float != tc.want {
				t.Errorf("x = %s %v, want float %v", x.Kind, x.Float, tc.want)
			}
		})
	}
	root, _ := load.Parse("tenancy.toml", []byte("x = nan"))
	if x := root.Table.Get("x"); x.Kind != load.Float || !math.IsNaN(x.Float) {
		t.Errorf("nan parsed as %s %v", x.Kind, x.Float)
	}
}
