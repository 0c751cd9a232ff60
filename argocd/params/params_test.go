package params

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Cluster API version lists in the form Argo CD sends: every group/version
// and every group/version/Kind the destination serves.
const (
	clusterWithV1beta2 = "apps/v1,apps/v1/Deployment,kueue.x-k8s.io/v1beta1,kueue.x-k8s.io/v1beta1/ClusterQueue,kueue.x-k8s.io/v1beta2,kueue.x-k8s.io/v1beta2/ClusterQueue,v1,v1/Namespace"
	clusterV1beta1Only = "apps/v1,apps/v1/Deployment,kueue.x-k8s.io/v1beta1,kueue.x-k8s.io/v1beta1/ClusterQueue,v1,v1/Namespace"
	clusterNoKueue     = "apps/v1,apps/v1/Deployment,scheduling.run.ai/v2,scheduling.run.ai/v2/Queue,v1"
)

func TestResolve(t *testing.T) {
	defaults := Resolved{
		// No backend: the agreement's backend key chooses (Options).
		KueueAPI: Value{"v1beta2", FromDefault},
	}
	with := func(backend, kueueAPI Value) Resolved {
		r := defaults
		if backend.Value != "" {
			r.Backend = backend
		}
		if kueueAPI.Value != "" {
			r.KueueAPI = kueueAPI
		}
		return r
	}
	tests := map[string]struct {
		environ []string
		want    Resolved
	}{
		"nothing set": {
			environ: []string{"PATH=/usr/bin", "ARGOCD_APP_NAME=queues"},
			want:    defaults,
		},
		"Application with a plugin section but no parameters sends null": {
			environ: []string{"ARGOCD_APP_PARAMETERS=null"},
			want:    defaults,
		},
		"empty parameter list": {
			environ: []string{"ARGOCD_APP_PARAMETERS=[]"},
			want:    defaults,
		},
		"parameters with values": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","string":"kai"},{"name":"kueueAPI","string":"v1beta1"}]`, "PARAM_BACKEND=kai", "PARAM_KUEUEAPI=v1beta1"},
			want: with(Value{"kai", "ARGOCD_APP_PARAMETERS parameter backend"},
				Value{"v1beta1", "ARGOCD_APP_PARAMETERS parameter kueueAPI"}),
		},
		"parameter named without a value counts as unset": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend"},{"name":"kueueAPI","string":"v1beta1"}]`, "PARAM_KUEUEAPI=v1beta1"},
			want:    with(Value{}, Value{"v1beta1", "ARGOCD_APP_PARAMETERS parameter kueueAPI"}),
		},
		"parameter with an empty string counts as unset": {
			// Argo CD drops PARAM_BACKEND= because its value is empty.
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","string":""}]`, "ARGOCD_ENV_TENANCY_BACKEND=kai"},
			want:    with(Value{"kai", EnvBackend}, Value{}),
		},
		"PARAM_ variables alone, without ARGOCD_APP_PARAMETERS": {
			environ: []string{"PARAM_BACKEND=kueue", "PARAM_KUEUEAPI=v1beta1"},
			want:    with(Value{"kueue", "PARAM_BACKEND"}, Value{"v1beta1", "PARAM_KUEUEAPI"}),
		},
		"plugin.env alone": {
			environ: []string{"ARGOCD_ENV_TENANCY_BACKEND=kueue", "ARGOCD_ENV_TENANCY_KUEUE_API=v1beta1"},
			want:    with(Value{"kueue", EnvBackend}, Value{"v1beta1", EnvKueueAPI}),
		},
		"parameters win over plugin.env": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","string":"kueue"}]`, "PARAM_BACKEND=kueue", "ARGOCD_ENV_TENANCY_BACKEND=kai", "ARGOCD_ENV_TENANCY_KUEUE_API=v1beta1"},
			want:    with(Value{"kueue", "ARGOCD_APP_PARAMETERS parameter backend"}, Value{"v1beta1", EnvKueueAPI}),
		},
		"PARAM_ variables win over plugin.env": {
			environ: []string{"PARAM_KUEUEAPI=v1beta2", "ARGOCD_ENV_TENANCY_KUEUE_API=v1beta1", "KUBE_API_VERSIONS=" + clusterV1beta1Only},
			want:    with(Value{}, Value{"v1beta2", "PARAM_KUEUEAPI"}),
		},
		"plugin.env wins over the cluster's API versions": {
			environ: []string{"ARGOCD_ENV_TENANCY_KUEUE_API=v1beta2", "KUBE_API_VERSIONS=" + clusterV1beta1Only},
			want:    with(Value{}, Value{"v1beta2", EnvKueueAPI}),
		},
		"cluster serving Kueue v1beta2 and v1beta1": {
			environ: []string{"KUBE_API_VERSIONS=" + clusterWithV1beta2},
			want:    with(Value{}, Value{"v1beta2", FromAPIVersions}),
		},
		"cluster serving only Kueue v1beta1": {
			environ: []string{"KUBE_API_VERSIONS=" + clusterV1beta1Only},
			want:    with(Value{}, Value{"v1beta1", FromAPIVersions}),
		},
		"cluster serving only Kueue v1beta1, group/version entries only": {
			environ: []string{"KUBE_API_VERSIONS=v1, kueue.x-k8s.io/v1beta1 ,apps/v1"},
			want:    with(Value{}, Value{"v1beta1", FromAPIVersions}),
		},
		"cluster without Kueue falls back to v1beta2": {
			environ: []string{"KUBE_API_VERSIONS=" + clusterNoKueue},
			want:    defaults,
		},
		"a look-alike group is not Kueue": {
			environ: []string{"KUBE_API_VERSIONS=kueue.x-k8s.io.example.com/v1beta1,x-kueue.x-k8s.io/v1beta1"},
			want:    defaults,
		},
		"empty KUBE_API_VERSIONS falls back to v1beta2": {
			environ: []string{"KUBE_API_VERSIONS="},
			want:    defaults,
		},
		"KAI ignores the cluster's Kueue version but still reports it": {
			environ: []string{"PARAM_BACKEND=kai", "KUBE_API_VERSIONS=" + clusterV1beta1Only},
			want:    with(Value{"kai", "PARAM_BACKEND"}, Value{"v1beta1", FromAPIVersions}),
		},
		"other plugin.env entries are not ours to judge": {
			environ: []string{"ARGOCD_ENV_BACKEND=whatever", "ARGOCD_ENV_FOO=bar", "PARAM_OTHER=1"},
			want:    defaults,
		},
		"cluster parameter": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"cluster","string":"east"}]`, "PARAM_CLUSTER=east", "ARGOCD_ENV_TENANCY_CLUSTER=west"},
			want:    Resolved{KueueAPI: defaults.KueueAPI, Cluster: Value{"east", "ARGOCD_APP_PARAMETERS parameter cluster"}},
		},
		"cluster from plugin.env, as an ApplicationSet may template it": {
			environ: []string{"ARGOCD_ENV_TENANCY_CLUSTER=manager"},
			want:    Resolved{KueueAPI: defaults.KueueAPI, Cluster: Value{"manager", EnvCluster}},
		},
		"cluster from PARAM_CLUSTER alone": {
			environ: []string{"PARAM_CLUSTER=west"},
			want:    Resolved{KueueAPI: defaults.KueueAPI, Cluster: Value{"west", "PARAM_CLUSTER"}},
		},
		"the last of duplicate variables wins, as in exec": {
			environ: []string{"ARGOCD_ENV_TENANCY_BACKEND=bogus", "ARGOCD_ENV_TENANCY_BACKEND=kai"},
			want:    with(Value{"kai", EnvBackend}, Value{}),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Resolve(tc.environ)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	tests := map[string]struct {
		environ []string
		// wantErr is the whole message: it must name where the value came from.
		wantErr string
	}{
		"invalid backend parameter": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","string":"volcano"}]`, "PARAM_BACKEND=volcano"},
			wantErr: `ARGOCD_APP_PARAMETERS parameter backend: invalid options: backend "volcano": must be kueue or kai`,
		},
		"invalid kueueAPI parameter": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"kueueAPI","string":"v1"}]`},
			wantErr: `ARGOCD_APP_PARAMETERS parameter kueueAPI: invalid options: kueue API "v1": must be v1beta2 or v1beta1`,
		},
		"invalid PARAM_ variable": {
			environ: []string{"PARAM_KUEUEAPI=V1BETA2"},
			wantErr: `PARAM_KUEUEAPI: invalid options: kueue API "V1BETA2": must be v1beta2 or v1beta1`,
		},
		"invalid plugin.env value": {
			environ: []string{"ARGOCD_ENV_TENANCY_BACKEND=Kueue"},
			wantErr: `ARGOCD_ENV_TENANCY_BACKEND: invalid options: backend "Kueue": must be kueue or kai`,
		},
		"invalid plugin.env value even when a parameter overrides it": {
			// A latent mistake fails now, not when someone removes the parameter.
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"kueueAPI","string":"v1beta1"}]`, "PARAM_KUEUEAPI=v1beta1", "ARGOCD_ENV_TENANCY_KUEUE_API=beta1"},
			wantErr: `ARGOCD_ENV_TENANCY_KUEUE_API: invalid options: kueue API "beta1": must be v1beta2 or v1beta1`,
		},
		"unknown plugin.env entry": {
			environ: []string{"ARGOCD_ENV_TENANCY_BAKEND=kai", "ARGOCD_ENV_TENANCY_KUEUEAPI=v1beta1"},
			wantErr: `invalid options: unknown plugin.env entry TENANCY_BAKEND (ARGOCD_ENV_TENANCY_BAKEND), TENANCY_KUEUEAPI (ARGOCD_ENV_TENANCY_KUEUEAPI): known are TENANCY_BACKEND, TENANCY_KUEUE_API and TENANCY_CLUSTER`,
		},
		"unknown parameter": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"kueueApi","string":"v1beta1"}]`},
			wantErr: `invalid options: ARGOCD_APP_PARAMETERS: unknown parameter "kueueApi": known are backend, kueueAPI and cluster`,
		},
		"array parameter": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","array":["kai"]}]`, "PARAM_BACKEND_0=kai"},
			wantErr: `invalid options: ARGOCD_APP_PARAMETERS: parameter backend must be a string, not an array or a map`,
		},
		"empty map parameter": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","map":{}}]`},
			wantErr: `invalid options: ARGOCD_APP_PARAMETERS: parameter backend must be a string, not an array or a map`,
		},
		"duplicate parameter": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","string":"kai"},{"name":"backend","string":"kai"}]`},
			wantErr: `invalid options: ARGOCD_APP_PARAMETERS: parameter backend is set more than once`,
		},
		"malformed JSON": {
			environ: []string{`ARGOCD_APP_PARAMETERS={"name":"backend"}`},
			wantErr: `invalid options: ARGOCD_APP_PARAMETERS is not a JSON array of parameters: json: cannot unmarshal object into Go value of type []params.parameter`,
		},
		"trailing data after the JSON": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[] []`},
			wantErr: `invalid options: ARGOCD_APP_PARAMETERS: unexpected data after the JSON array`,
		},
		"PARAM_ disagrees with ARGOCD_APP_PARAMETERS": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","string":"kueue"}]`, "PARAM_BACKEND=kai"},
			wantErr: `invalid options: PARAM_BACKEND="kai" disagrees with parameter backend="kueue" in ARGOCD_APP_PARAMETERS`,
		},
		"PARAM_CLUSTER disagrees with ARGOCD_APP_PARAMETERS": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"cluster","string":"east"}]`, "PARAM_CLUSTER=west"},
			wantErr: `invalid options: PARAM_CLUSTER="west" disagrees with parameter cluster="east" in ARGOCD_APP_PARAMETERS`,
		},
		"cluster as an array, as a list generator's element might be": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[{"name":"cluster","array":["east","west"]}]`},
			wantErr: `invalid options: ARGOCD_APP_PARAMETERS: parameter cluster must be a string, not an array or a map`,
		},
		"PARAM_ set although ARGOCD_APP_PARAMETERS lacks the parameter": {
			environ: []string{`ARGOCD_APP_PARAMETERS=[]`, "PARAM_KUEUEAPI=v1beta1"},
			wantErr: `invalid options: PARAM_KUEUEAPI="v1beta1" is set but ARGOCD_APP_PARAMETERS has no parameter kueueAPI`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Resolve(tc.environ)
			if err == nil {
				t.Fatalf("Resolve = %+v, want error %q", got, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want,+got):\n%s", diff)
			}
			if !errors.Is(err, generator.ErrOptions) {
				t.Errorf("error %q does not wrap generator.ErrOptions", err)
			}
		})
	}
}

func TestParamVarMatchesArgoCD(t *testing.T) {
	// Argo CD upper-cases the name and replaces anything outside [A-Z0-9_].
	tests := map[string]string{
		"backend":   "PARAM_BACKEND",
		"kueueAPI":  "PARAM_KUEUEAPI",
		"kueue-api": "PARAM_KUEUE_API",
		"a.b c":     "PARAM_A_B_C",
	}
	for name, want := range tests {
		if got := paramVar(name); got != want {
			t.Errorf("paramVar(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestResolvedString(t *testing.T) {
	r, err := Resolve([]string{"KUBE_API_VERSIONS=" + clusterV1beta1Only})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.String(), "backend the agreement's, Kueue API v1beta1 (KUBE_API_VERSIONS)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// Unset, the cluster is named as what to set, for a fleet agreement.
	if got, want := r.Options(), (generator.Options{KueueAPI: "v1beta1", ClusterFrom: ClusterUnset}); got != want {
		t.Errorf("Options() = %+v, want %+v", got, want)
	}
	// After the render, the log says what the agreement chose, and why.
	for _, tc := range []struct {
		plan *plan.Agreement
		want string
	}{
		{&plan.Agreement{}, "backend kueue (default), Kueue API v1beta1 (KUBE_API_VERSIONS)"},
		{&plan.Agreement{Backend: &plan.BackendKey{Names: []string{"kueue"}}}, "backend kueue (the agreement), Kueue API v1beta1 (KUBE_API_VERSIONS)"},
	} {
		if got := r.Rendered(&generator.Result{Plan: tc.plan, Backend: generator.Kueue}).String(); got != tc.want {
			t.Errorf("Rendered().String() = %q, want %q", got, tc.want)
		}
	}
	r, _ = Resolve([]string{"PARAM_BACKEND=kai"})
	if got, want := r.String(), "backend kai (PARAM_BACKEND)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// A backend set here is refused at the agreement's key by that name.
	if got, want := r.Options(), (generator.Options{Backend: generator.KAI, BackendFrom: "PARAM_BACKEND", KueueAPI: "v1beta2", ClusterFrom: ClusterUnset}); got != want {
		t.Errorf("Options() = %+v, want %+v", got, want)
	}
	// A cluster is logged and named by its source the same way.
	r, _ = Resolve([]string{"PARAM_BACKEND=kueue", "ARGOCD_ENV_TENANCY_CLUSTER=east"})
	if got, want := r.String(), "backend kueue (PARAM_BACKEND), Kueue API v1beta2 (default), cluster east (ARGOCD_ENV_TENANCY_CLUSTER)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	want := generator.Options{Backend: generator.Kueue, BackendFrom: "PARAM_BACKEND", KueueAPI: "v1beta2", Cluster: "east", ClusterFrom: EnvCluster}
	if got := r.Options(); got != want {
		t.Errorf("Options() = %+v, want %+v", got, want)
	}
}
