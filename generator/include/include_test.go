package include_test

import (
	"io/fs"
	"path"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/include"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
	"github.com/tenancy-dev/tenancy/generator/load"
)

const agreement = `version = 1
name = "gpu-pool"
include = ["teams/*.toml"]
[flavors.h100]
capacity = 16
`

// resolve resolves the includes of files["tenancy.toml"], the agreement in
// the directory files, as the facade does for deploy/tenancy.toml.
func resolve(t *testing.T, files fstest.MapFS, limits include.Limits) (*load.Value, []string, diag.List) {
	t.Helper()
	src := files["tenancy.toml"].Data
	root, diags := load.Parse("deploy/tenancy.toml", src)
	if len(diags) > 0 {
		t.Fatalf("the agreement does not parse: %v", diags)
	}
	dir := &include.Dir{FS: files, Self: "tenancy.toml", Name: func(n string) string { return path.Join("deploy", n) }}
	got, diags := include.Resolve(root, "deploy/tenancy.toml", dir, len(src), limits)
	diags.Sort()
	return root, got, diags
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

var limits = include.Limits{MaxSize: 1 << 20}

func TestResolveMergesTeamsAndDepartments(t *testing.T) {
	files := fstest.MapFS{
		"tenancy.toml":        file(agreement + "[teams.serving]\nguaranteed = 4\n"),
		"teams/training.toml": file("[teams.training]\nguaranteed = 8\ndepartment = \"science\"\n"),
		"teams/science.toml":  file("include = [\"more/*.toml\"]\n[departments.science]\nguaranteed = 8\n"),
		"more/research.toml":  file("\n[teams.research]\nguaranteed = 2\n"),
		"teams/notes.txt":     file("not matched"),
	}
	root, got, diags := resolve(t, files, limits)
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if diff := cmp.Diff([]string{"deploy/teams/science.toml", "deploy/more/research.toml", "deploy/teams/training.toml"}, got); diff != "" {
		t.Errorf("files (-want,+got):\n%s", diff)
	}
	teams := root.Table.Get("teams").Table
	if diff := cmp.Diff([]string{"serving", "research", "training"}, teams.Keys); diff != "" {
		t.Errorf("teams (-want,+got):\n%s", diff)
	}
	// Every value keeps its file: a problem with it is reported there.
	wantPos := map[string]diag.Pos{
		"serving":  {Line: 6, Column: 8},
		"research": {Line: 2, Column: 8, File: "deploy/more/research.toml"},
		"training": {Line: 1, Column: 8, File: "deploy/teams/training.toml"},
	}
	for name, want := range wantPos {
		if diff := cmp.Diff(want, teams.Get(name).KeyPos); diff != "" {
			t.Errorf("teams.%s's position (-want,+got):\n%s", name, diff)
		}
	}
	if got := teams.Get("training").Table.Get("guaranteed").Pos.File; got != "deploy/teams/training.toml" {
		t.Errorf("teams.training.guaranteed is in %q, want deploy/teams/training.toml", got)
	}
	if root.Table.Get("departments").Table.Get("science") == nil {
		t.Error("departments.science was not merged")
	}
}

func TestResolveRefuses(t *testing.T) {
	withInclude := func(list string) *fstest.MapFile {
		return file("version = 1\nname = \"gpu-pool\"\ninclude = " + list + "\n")
	}
	tests := map[string]struct {
		files  fstest.MapFS
		limits include.Limits
		want   diag.List
	}{
		"a team defined in two files, at the second": {
			files: fstest.MapFS{
				"tenancy.toml":  file(agreement + "[teams.a]\nguaranteed = 1\n"),
				"teams/a.toml":  file("[teams.a]\nguaranteed = 2\n"),
				"teams/b.toml":  file("[teams.b]\n[departments.d]\n"),
				"teams/b2.toml": file("[departments.d]\n"),
			},
			want: diag.List{
				diagtest.Error("deploy/teams/a.toml", 1, 8, "teams.a", field.ErrorTypeDuplicate),
				diagtest.Error("deploy/teams/b2.toml", 1, 14, "departments.d", field.ErrorTypeDuplicate),
			},
		},
		"a cycle of includes, at the pattern that closes it": {
			files: fstest.MapFS{
				"tenancy.toml": withInclude(`["a.toml"]`),
				"a.toml":       file("include = [\"b/*.toml\"]\n"),
				"b/b.toml":     file("include = [\"tenancy.toml\"]\n"),
			},
			want: diag.List{diagtest.Error("deploy/b/b.toml", 1, 12, "include[0]", field.ErrorTypeInvalid)},
		},
		"a file including itself": {
			files: fstest.MapFS{"tenancy.toml": withInclude(`["tenancy.toml"]`)},
			want:  diag.List{diagtest.Error("deploy/tenancy.toml", 3, 12, "include[0]", field.ErrorTypeInvalid)},
		},
		"a pattern matching nothing, and a missing file": {
			files: fstest.MapFS{"tenancy.toml": withInclude(`["teams/*.toml", "gone.toml"]`)},
			want: diag.List{
				diagtest.Error("deploy/tenancy.toml", 3, 12, "include[0]", field.ErrorTypeNotFound),
				diagtest.Error("deploy/tenancy.toml", 3, 28, "include[1]", field.ErrorTypeNotFound),
			},
		},
		"paths leaving the agreement's directory": {
			files: fstest.MapFS{"tenancy.toml": withInclude(`["../other/*.toml", "/etc/tenancy.toml", 'teams\a.toml', ""]`)},
			want: diag.List{
				diagtest.Error("deploy/tenancy.toml", 3, 12, "include[0]", field.ErrorTypeForbidden),
				diagtest.Error("deploy/tenancy.toml", 3, 31, "include[1]", field.ErrorTypeForbidden),
				diagtest.Error("deploy/tenancy.toml", 3, 52, "include[2]", field.ErrorTypeForbidden),
				diagtest.Error("deploy/tenancy.toml", 3, 68, "include[3]", field.ErrorTypeForbidden),
			},
		},
		"a symbolic link, even one that stays inside": {
			files: fstest.MapFS{
				"tenancy.toml": file(agreement),
				"real.toml":    file("[teams.a]\n"),
				"teams/a.toml": &fstest.MapFile{Data: []byte("../real.toml"), Mode: fs.ModeSymlink},
			},
			want: diag.List{diagtest.Error("deploy/tenancy.toml", 3, 12, "include[0]", field.ErrorTypeForbidden)},
		},
		"a file included twice": {
			files: fstest.MapFS{"tenancy.toml": withInclude(`["t/*.toml", "t/a.toml"]`), "t/a.toml": file("")},
			want:  diag.List{diagtest.Error("deploy/tenancy.toml", 3, 24, "include[1]", field.ErrorTypeDuplicate)},
		},
		"an included file with more than teams and departments": {
			files: fstest.MapFS{
				"tenancy.toml": file(agreement),
				"teams/a.toml": file("name = \"other\"\n[flavors.a100]\ncapacity = 8\n"),
			},
			want: diag.List{
				diagtest.Error("deploy/teams/a.toml", 1, 1, "name", field.ErrorTypeForbidden),
				diagtest.Error("deploy/teams/a.toml", 2, 2, "flavors", field.ErrorTypeForbidden),
			},
		},
		"a syntax error in an included file, located there": {
			files: fstest.MapFS{"tenancy.toml": file(agreement), "teams/a.toml": file("[teams.a]\nguaranteed = = 1\n")},
			want:  diag.List{diagtest.Error("deploy/teams/a.toml", 2, 14, "", field.ErrorTypeInvalid)},
		},
		"a file over the limit": {
			files:  fstest.MapFS{"tenancy.toml": file(agreement), "teams/a.toml": file("# " + string(make([]byte, 200)) + "\n")},
			limits: include.Limits{MaxSize: 150},
			want:   diag.List{diagtest.Error("deploy/tenancy.toml", 3, 12, "include[0]", field.ErrorTypeForbidden)},
		},
		"files within the limit each, over it together": {
			files: fstest.MapFS{
				"tenancy.toml": file(agreement),
				"teams/a.toml": file("[teams.a]\nguaranteed = 1\n"),
				"teams/b.toml": file("[teams.b]\nguaranteed = 1\n"),
			},
			limits: include.Limits{MaxSize: len(agreement) + 30},
			want:   diag.List{diagtest.Error("deploy/tenancy.toml", 3, 12, "include[0]", field.ErrorTypeTooLong)},
		},
		"include that is not a list of strings": {
			files: fstest.MapFS{"tenancy.toml": withInclude(`"teams/*.toml"`), "x.toml": withInclude(`[1]`)},
			want:  diag.List{diagtest.Error("deploy/tenancy.toml", 3, 11, "include", field.ErrorTypeTypeInvalid)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.limits.MaxSize == 0 {
				tc.limits = limits
			}
			_, _, got := resolve(t, tc.files, tc.limits)
			if diff := diagtest.Diff(t, tc.want, got); diff != "" {
				t.Errorf("diagnostics (-want,+got):\n%s\n%s", diff, got)
			}
		})
	}
}

func TestResolveWithoutDirectory(t *testing.T) {
	root, _ := load.Parse("<stdin>", []byte(agreement))
	_, got := include.Resolve(root, "<stdin>", nil, len(agreement), limits)
	want := diag.List{diagtest.Error("<stdin>", 3, 11, "include", field.ErrorTypeForbidden)}
	if diff := diagtest.Diff(t, want, got); diff != "" {
		t.Errorf("diagnostics (-want,+got):\n%s", diff)
	}
}
