package windowctl_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/render/windowctl"
	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

// issue is the issue's agreement as written there.
const issue = windowstest.Agreement

func renderIssue(t *testing.T, opts generator.Options) *generator.Result {
	t.Helper()
	res, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: []byte(issue)}, opts)
	if err != nil {
		var ae *generator.AgreementError
		if errors.As(err, &ae) {
			t.Fatal(ae.Diagnostics)
		}
		t.Fatal(err)
	}
	return res
}

// TestRender: with a window, the controller and what it needs; the queue of
// the team with a window is the only one it may patch; it runs non-root on
// a read-only root filesystem; the agreement it reads is the source itself.
func TestRender(t *testing.T) {
	for _, opts := range []generator.Options{{Backend: generator.Kueue}, {Backend: generator.KAI}} {
		t.Run(string(opts.Backend), func(t *testing.T) {
			res := renderIssue(t, opts)
			kinds := map[string]int{}
			var dep appsv1.Deployment
			var role rbacv1.ClusterRole
			for _, o := range res.Objects {
				if o.Namespace() != windowctl.Namespace && o.Name() != windowctl.Name("gpu-pool") && o.Name() != windowctl.Namespace {
					continue
				}
				kinds[o.Kind()]++
				switch o.Kind() {
				case "Deployment":
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Fields, &dep); err != nil {
						t.Fatal(err)
					}
				case "ClusterRole":
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Fields, &role); err != nil {
						t.Fatal(err)
					}
				case "ConfigMap":
					if got := o.Fields["data"].(map[string]any)[windowctl.AgreementKey]; got != issue {
						t.Errorf("the ConfigMap holds %q, want the agreement's bytes", got)
					}
				}
			}
			want := map[string]int{"Namespace": 1, "ConfigMap": 1, "ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "Deployment": 1}
			if diff := cmp.Diff(want, kinds); diff != "" {
				t.Errorf("controller objects (-want,+got):\n%s", diff)
			}
			if got := role.Rules[0].ResourceNames; !cmp.Equal(got, []string{"inference"}) {
				t.Errorf("the controller may patch %v, want only inference's queue", got)
			}
			c := dep.Spec.Template.Spec.Containers[0]
			if c.Image != windowctl.Image || c.Args[0] != "windows" {
				t.Errorf("container %s %v", c.Image, c.Args)
			}
			if !*c.SecurityContext.ReadOnlyRootFilesystem || !*dep.Spec.Template.Spec.SecurityContext.RunAsNonRoot {
				t.Errorf("the controller must run non-root on a read-only root filesystem")
			}
			if !strings.Contains(strings.Join(c.Args, " "), "--backend="+string(opts.Backend)) {
				t.Errorf("args %v do not name the backend", c.Args)
			}
		})
	}
}

// TestRenderIsClockFree: the same bytes on every run.
func TestRenderIsClockFree(t *testing.T) {
	a, b := renderIssue(t, generator.Options{}), renderIssue(t, generator.Options{})
	if string(a.Manifests) != string(b.Manifests) {
		t.Error("two renders differ")
	}
}

// TestKAIWarnsAboutLending: KAI has no lending limit.
func TestKAIWarnsAboutLending(t *testing.T) {
	res := renderIssue(t, generator.Options{Backend: generator.KAI})
	var found bool
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "the window's lendable (6 of flavor h100) is not applied") {
			found = true
			if w.Pos.Line != 13 {
				t.Errorf("warning at line %d, want 13", w.Pos.Line)
			}
		}
	}
	if !found {
		t.Errorf("no KAI lending warning in %v", res.Warnings)
	}
	for _, w := range renderIssue(t, generator.Options{}).Warnings {
		if strings.Contains(w.Message, "window") {
			t.Errorf("Kueue warns: %v", w)
		}
	}
}

// TestKAIWarnsAboutReservedBorrow: under KAI a team that never lends sits
// in the reserved subtree, where a window's borrow cannot act
// (TestKAIWindowBorrow in test/e2e/kai found it); one that lends can.
func TestKAIWarnsAboutReservedBorrow(t *testing.T) {
	for _, c := range []struct {
		name, lendable string
		want           bool
	}{
		{"never lends", "0", true},
		{"lends 2", "2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(issue, "lendable = 6\n", "borrow = 4\n", 1)
			src = strings.Replace(src, "guaranteed = 8\nlendable = 0\n", "guaranteed = 8\nlendable = "+c.lendable+"\n", 1)
			res, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{Backend: generator.KAI})
			if err != nil {
				t.Fatal(err)
			}
			var got bool
			for _, w := range res.Warnings {
				if strings.Contains(w.Message, "the window's borrow (4 of flavor h100) cannot act there") {
					got = true
					if w.Pos.Line != 13 || w.Path.String() != "teams.inference.windows[0].borrow" {
						t.Errorf("warning at %d %s, want line 13 teams.inference.windows[0].borrow", w.Pos.Line, w.Path)
					}
				}
			}
			if got != c.want {
				t.Errorf("reserved-borrow warning %v, want %v; warnings: %v", got, c.want, res.Warnings)
			}
		})
	}
}

// TestNoWindowNoController: agreements without windows render as before.
func TestNoWindowNoController(t *testing.T) {
	src := windowstest.Head + "[teams.research]\nguaranteed = 8\n"
	res, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res.Manifests), "tenancy-windows") {
		t.Error("an agreement without windows renders the controller")
	}
}
