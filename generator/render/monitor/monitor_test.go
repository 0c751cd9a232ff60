package monitor_test

//lint:file-ignore SA1019 the rendered dashboard is the classic JSON model, read back with its type (see dashboard.go)

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/crdcheck"
	"github.com/tenancy-dev/tenancy/generator/internal/examples"
	"github.com/tenancy-dev/tenancy/generator/render/monitor"
)

// ruleCRD loads prometheus-operator's PrometheusRule CRD from the module
// cache, at the version of the API types in go.mod: the CRD ships in the
// operator's main module (example/prometheus-operator-crd), which the
// API-types module is released with.
func ruleCRD(t *testing.T) *crdcheck.CRD {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring").Output()
	if err != nil {
		t.Fatalf("go list -m prometheus-operator API types: %v", err)
	}
	mod := "github.com/prometheus-operator/prometheus-operator@" + strings.TrimSpace(string(out))
	out, err = exec.Command("go", "mod", "download", "-json", mod).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s", mod, err, out)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		t.Fatalf("go mod download %s: no directory (%v)", mod, err)
	}
	crd, err := crdcheck.Load(filepath.Join(info.Dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_prometheusrules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

// TestConformsToPrometheusOperator checks every example's monitoring
// objects, for both backends: the PrometheusRule against the operator's CRD
// (the API server's validators, pruning and defaults) and strictly against
// its Go type; the ConfigMap carries the sidecar's label and a dashboard
// that round-trips through the Grafana SDK's types.
func TestConformsToPrometheusOperator(t *testing.T) {
	crd := ruleCRD(t)
	seen := 0
	parts := examples.Parts(t)
	// The agreement with monitoring on lives beside the goldens, not under
	// examples/ (whose agreements the control-plane suite applies to a
	// cluster without prometheus-operator's CRDs).
	const withMonitoring = "generator/testdata/monitoring/tenancy.toml"
	src, err := generator.ReadFile(filepath.Join(examples.Root(t), withMonitoring))
	if err != nil {
		t.Fatal(err)
	}
	src.Path = withMonitoring
	parts = examples.AddParts(t, parts, withMonitoring, src)
	for path, part := range parts {
		for _, b := range []generator.Backend{generator.Kueue, generator.KAI} {
			if part.Manager && b == generator.KAI {
				continue // KAI has no multi-cluster dispatch: a fleet's manager is Kueue's
			}
			res, err := generator.Render(part.Source, part.Options(generator.Options{Backend: b}))
			if err != nil {
				t.Fatalf("%s %s: %v", path, b, err)
			}
			for _, o := range res.Objects {
				switch o.Kind() {
				case "PrometheusRule":
					seen++
					var obj map[string]any
					if err := yaml.Unmarshal(o.YAML, &obj); err != nil {
						t.Fatal(err)
					}
					for _, e := range crd.Validate(obj) {
						t.Errorf("%s %s: CRD: %v", path, b, e)
					}
					missing, err := crd.MissingDefaults(obj)
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range missing {
						t.Errorf("%s %s: %s has a default the API server would add", path, b, m)
					}
					var pr monitoringv1.PrometheusRule
					if err := yaml.UnmarshalStrict(o.YAML, &pr); err != nil {
						t.Errorf("%s %s: PrometheusRule does not decode strictly: %v", path, b, err)
					}
				case "ConfigMap":
					var cm corev1.ConfigMap
					if err := yaml.UnmarshalStrict(o.YAML, &cm); err != nil {
						t.Fatalf("%s %s: %v", path, b, err)
					}
					if got := cm.Labels[monitor.DashboardLabel]; got != monitor.DashboardLabelValue {
						t.Errorf("%s %s: label %s = %q, want %q", path, b, monitor.DashboardLabel, got, monitor.DashboardLabelValue)
					}
					if len(cm.Data) != 1 {
						t.Fatalf("%s %s: dashboard ConfigMap holds %d keys, want 1", path, b, len(cm.Data))
					}
					for _, js := range cm.Data {
						roundTrip(t, js)
					}
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no example renders a PrometheusRule: the test checks nothing")
	}
}

// roundTrip decodes the dashboard strictly into the SDK's Dashboard and
// encodes it again: the JSON must come back the same.
func roundTrip(t *testing.T, js string) {
	t.Helper()
	// Panels decode into their plugin's type once the plugins are known.
	plugins.RegisterDefaultPlugins()
	var d dashboard.Dashboard
	err := d.UnmarshalJSONStrict([]byte(js))
	// The SDK returns an empty cog.BuildErrors, not nil, on success.
	if be := (cog.BuildErrors)(nil); errors.As(err, &be) && len(be) == 0 {
		err = nil
	}
	if err != nil {
		t.Fatalf("dashboard does not decode strictly into the SDK's types: %v", err)
	}
	// Strict decoding checks the fields; the SDK's lenient decoder is the
	// one that fills panels back in, so the round trip uses it.
	d = dashboard.Dashboard{}
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatalf("dashboard does not decode into the SDK's types: %v", err)
	}
	again, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	json.Unmarshal([]byte(js), &want)
	json.Unmarshal(again, &got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dashboard JSON after a round trip through the SDK (-want,+got):\n%s", diff)
	}
	if len(d.Panels) < 6 {
		t.Errorf("dashboard has %d panels, want at least 6", len(d.Panels))
	}
}
