package argocd_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update rewrites adapter_test.go from test/argocd/v2's instead of comparing.
var update = flag.Bool("update", false, "rewrite adapter_test.go from ../v2/adapter_test.go")

// TestAdapterIsV2sWithV3Imports keeps the one adapter in step across the two
// modules: adapter_test.go must be test/argocd/v2/adapter_test.go with Argo
// CD's module path changed from /v2 to /v3, and nothing else. A fix made to
// one copy only would leave the other major tested by different code. The
// modules cannot share the file itself: each imports its own Argo CD major.
func TestAdapterIsV2sWithV3Imports(t *testing.T) {
	const (
		v2 = "github.com/argoproj/argo-cd/v2"
		v3 = "github.com/argoproj/argo-cd/v3"
	)
	src, err := os.ReadFile(filepath.Join("..", "v2", "adapter_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	// Without the path to rewrite the comparison proves nothing: both files
	// could have stopped importing Argo CD and still be equal.
	if !strings.Contains(string(src), v2) {
		t.Fatalf("../v2/adapter_test.go does not mention %s: this test's rewrite no longer applies", v2)
	}
	want := strings.ReplaceAll(string(src), v2, v3)
	if *update {
		if err := os.WriteFile("adapter_test.go", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("adapter_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf(`test/argocd/v3/adapter_test.go is not test/argocd/v2/adapter_test.go with %s as %s (-want,+got):
%s
Make the change in test/argocd/v2/adapter_test.go, then regenerate this copy:
  cd test/argocd/v3 && go test -run TestAdapterIsV2sWithV3Imports -update`, v2, v3, d)
	}
}
