package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/cmd/tenancy/internal/controller"
	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

// argoApplication is the part of Argo CD's Application type (v3.2,
// pkg/apis/application/v1alpha1) the printed fields go in, every field of
// ResourceIgnoreDifferences and SyncPolicy spelled out, so a strict decode
// refuses a key Argo CD does not have.
type argoApplication struct {
	Spec struct {
		IgnoreDifferences []struct {
			Group                 string   `json:"group"`
			Kind                  string   `json:"kind"`
			Name                  string   `json:"name"`
			Namespace             string   `json:"namespace"`
			JSONPointers          []string `json:"jsonPointers"`
			JQPathExpressions     []string `json:"jqPathExpressions"`
			ManagedFieldsManagers []string `json:"managedFieldsManagers"`
		} `json:"ignoreDifferences"`
		SyncPolicy struct {
			Automated                map[string]any `json:"automated"`
			SyncOptions              []string       `json:"syncOptions"`
			Retry                    map[string]any `json:"retry"`
			ManagedNamespaceMetadata map[string]any `json:"managedNamespaceMetadata"`
		} `json:"syncPolicy"`
	} `json:"spec"`
}

// TestArgoCDIgnoreDifferences: the printed fields are an Application's, and
// name, for each backend, the group and kind of the queues the windows
// controller applies to and the field manager it applies with, with the
// sync option that makes a sync keep those fields.
func TestArgoCDIgnoreDifferences(t *testing.T) {
	src := generator.Source{Path: "tenancy.toml", Data: []byte(windowstest.Agreement)}
	inside := time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		args     []string
		backends []gpu.Backend
	}{
		"both by default": {nil, gpu.Backends},
		"kueue":           {[]string{"--backend", "kueue"}, []gpu.Backend{gpu.Kueue}},
		"kai":             {[]string{"--backend", "kai"}, []gpu.Backend{gpu.KAI}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runIn(t.TempDir(), append([]string{"argocd", "ignore-differences"}, tc.args...)...)
			if code != exitOK || stderr != "" {
				t.Fatalf("exit %d, stderr %s", code, stderr)
			}
			var app argoApplication
			if err := yaml.UnmarshalStrict([]byte(stdout), &app); err != nil {
				t.Fatalf("not an Application's fields: %v\n%s", err, stdout)
			}
			if diff := cmp.Diff([]string{"RespectIgnoreDifferences=true"}, app.Spec.SyncPolicy.SyncOptions); diff != "" {
				t.Errorf("syncOptions (-want,+got):\n%s", diff)
			}
			var want, got []string
			for _, b := range tc.backends {
				opts, err := generator.Options{Backend: b}.Normalize()
				if err != nil {
					t.Fatal(err)
				}
				p, _, err := generator.Check(src, opts)
				if err != nil {
					t.Fatal(err)
				}
				// What the controller applies to: its resource, and the
				// kind of every patch it sends.
				c := controller.New(controller.Config{Plan: p, Options: opts})
				ws, err := generator.Windows(p, inside, opts)
				if err != nil || len(ws.Applies) == 0 {
					t.Fatalf("windows: %v, %d applies", err, len(ws.Applies))
				}
				for _, a := range ws.Applies {
					gv, _ := schema.ParseGroupVersion(a.Patch["apiVersion"].(string))
					if gv.Group != c.Queues().Group {
						t.Errorf("the patch's group %s is not the controller's %s", gv.Group, c.Queues().Group)
					}
					want = append(want, gv.Group+" "+a.Patch["kind"].(string)+" "+generator.WindowFieldManager)
				}
			}
			for _, d := range app.Spec.IgnoreDifferences {
				if d.Name != "" || d.Namespace != "" || d.JSONPointers != nil || d.JQPathExpressions != nil {
					t.Errorf("an entry narrower than the field manager: %+v", d)
				}
				got = append(got, d.Group+" "+d.Kind+" "+strings.Join(d.ManagedFieldsManagers, ","))
			}
			want = slices.Compact(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ignoreDifferences (-want,+got):\n%s", diff)
			}
		})
	}
	if _, stderr, code := runIn(t.TempDir(), "argocd", "ignore-differences", "--backend", "slurm"); code != exitUsage || !strings.Contains(stderr, "--backend") {
		t.Errorf("an unknown backend: exit %d, %s", code, stderr)
	}
}

// TestIgnoreDifferencesDocumented: README and docs/argocd.md show the
// command's output as it is, not a hand-written copy that may drift.
func TestIgnoreDifferencesDocumented(t *testing.T) {
	stdout, _, code := runIn(t.TempDir(), "argocd", "ignore-differences")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, doc := range []string{"../../README.md", "../../docs/argocd.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "$ tenancy argocd ignore-differences\n"+stdout+"```") {
			t.Errorf("%s does not show the output of tenancy argocd ignore-differences as it is:\n%s", doc, stdout)
		}
	}
}
