package argocd_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSameAsV2 keeps this module's tests identical to test/argocd/v2's up to
// the Argo CD major: both majors must run the same checks. After editing a
// file in ../v2, copy it:
//
//	for f in cmp_test.go install_test.go; do
//	  sed 's#github.com/argoproj/argo-cd/v2#github.com/argoproj/argo-cd/v3#g' ../v2/$f > $f
//	done
func TestSameAsV2(t *testing.T) {
	for _, name := range []string{"cmp_test.go", "install_test.go"} {
		v2, err := os.ReadFile("../v2/" + name)
		if err != nil {
			t.Fatal(err)
		}
		v3, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.ReplaceAll(string(v2), "github.com/argoproj/argo-cd/v2", "github.com/argoproj/argo-cd/v3")
		if diff := cmp.Diff(want, string(v3)); diff != "" {
			t.Errorf("%s differs from ../v2/%s beyond the Argo CD major (-want,+got):\n%s", name, name, diff)
		}
	}
}
