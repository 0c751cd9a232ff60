// Package goldentest holds what tests of tenancy's output share: golden
// files compared byte for byte and rewritten only with an explicit -update
// flag (as kyaml's framework does), and values in the shape a reader of the
// YAML gets them.
package goldentest

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Updating reports whether the test run was asked to rewrite golden files.
func Updating() bool { return *update }

// Compare compares got with the golden file at path, or with -update
// writes got there. rerun is the command that rewrites the file, for the
// messages: a golden file changes only when someone asks for it.
func Compare(t testing.TB, path string, got []byte, rerun string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run %s to create it)", err, rerun)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want,+got):\n%s\nrun %s if the change is intended, and review the diff", path, diff, rerun)
	}
}

// AsRead gives v the shape sigs.k8s.io/yaml (and so kubectl and Argo CD)
// gives what it reads (numbers as float64), so an object's Fields compare
// with its YAML read back.
func AsRead(t testing.TB, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
