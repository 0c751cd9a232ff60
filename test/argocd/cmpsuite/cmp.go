package cmpsuite

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func (s *suite) testDiscovery(t *testing.T) {
	agreement := s.referenceAgreement(t)
	tests := map[string]struct {
		files map[string][]byte
		want  bool
	}{
		"tenancy.toml in the source path": {
			files: map[string][]byte{appPath + "/tenancy.toml": agreement},
			want:  true,
		},
		"no tenancy.toml": {
			files: map[string][]byte{appPath + "/kustomization.yaml": []byte("resources: []\n")},
			want:  false,
		},
		"tenancy.toml only in a subdirectory": {
			files: map[string][]byte{appPath + "/nested/tenancy.toml": agreement},
			want:  false,
		},
		"tenancy.toml only in another app": {
			files: map[string][]byte{appPath + "/README.md": []byte("x\n"), "apps/other/tenancy.toml": agreement},
			want:  false,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			repo := newRepo(t, tc.files)
			resp := s.discover(t, repo, appPath, s.environ(t, application{apiVersions: clusterV1beta2}))
			if !resp.IsDiscoveryEnabled {
				t.Error("discovery is not enabled: plugin.yaml lost its discover section")
			}
			if resp.IsSupported != tc.want {
				t.Errorf("IsSupported = %v, want %v", resp.IsSupported, tc.want)
			}
		})
	}
}

func (s *suite) testParametersAnnounced(t *testing.T) {
	repo := s.referenceRepo(t)
	stream, err := s.client.GetParametersAnnouncement(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.SendRepoStream(filepath.Join(repo, appPath), repo, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range resp.ParameterAnnouncements {
		got = append(got, p.Name+"="+p.String)
	}
	// No default backend (unset, the agreement's backend key chooses), and
	// no default cluster (a fleet agreement without one is refused).
	if diff := cmp.Diff([]string{"backend=", "kueueAPI=", "cluster="}, got); diff != "" {
		t.Errorf("announced parameters (-want,+got):\n%s", diff)
	}
}

func (s *suite) testPluginConfiguration(t *testing.T) {
	resp, err := s.client.CheckPluginConfiguration(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !resp.IsDiscoveryConfigured || resp.ProvideGitCreds {
		t.Errorf("CheckPluginConfiguration = %+v, want discovery and no Git credentials", resp)
	}
}

func (s *suite) testGenerate(t *testing.T) {
	tests := map[string]struct {
		app application
		// renderArgs give tenancy render the same result.
		renderArgs []string
		// wantAPIVersions are the output's apiVersions, so that a case
		// cannot pass while the options are ignored on both sides.
		wantAPIVersions []string
	}{
		"no plugin section, cluster with Kueue v1beta2": {
			app:             application{apiVersions: clusterV1beta2},
			renderArgs:      []string{"--backend", "kueue", "--kueue-api", "v1beta2"},
			wantAPIVersions: withGuardrails("kueue.x-k8s.io/v1beta2"),
		},
		"no parameters, cluster with only Kueue v1beta1": {
			app:             application{plugin: &Plugin{Name: "tenancy"}, apiVersions: clusterV1beta1},
			renderArgs:      []string{"--kueue-api", "v1beta1"},
			wantAPIVersions: withGuardrails("kueue.x-k8s.io/v1beta1"),
		},
		"no parameters, cluster without Kueue": {
			app:             application{plugin: &Plugin{}, apiVersions: clusterBare},
			renderArgs:      []string{"--kueue-api", "v1beta2"},
			wantAPIVersions: withGuardrails("kueue.x-k8s.io/v1beta2"),
		},
		"parameter backend kai": {
			app: application{plugin: &Plugin{Parameters: []Parameter{
				{Name: "backend", String: str("kai")},
			}}, apiVersions: clusterV1beta2},
			renderArgs:      []string{"--backend", "kai"},
			wantAPIVersions: apiVersionsKAI,
		},
		"parameter kueueAPI over the cluster's versions": {
			app: application{plugin: &Plugin{Parameters: []Parameter{
				{Name: "kueueAPI", String: str("v1beta1")},
			}}, apiVersions: clusterV1beta2},
			renderArgs:      []string{"--kueue-api", "v1beta1"},
			wantAPIVersions: withGuardrails("kueue.x-k8s.io/v1beta1"),
		},
		"plugin.env backend kai": {
			app: application{plugin: &Plugin{Env: []EnvEntry{
				{Name: "TENANCY_BACKEND", Value: "kai"},
			}}, apiVersions: clusterV1beta2},
			renderArgs:      []string{"--backend", "kai"},
			wantAPIVersions: apiVersionsKAI,
		},
		"plugin.env Kueue API over the cluster's versions": {
			app: application{plugin: &Plugin{Env: []EnvEntry{
				{Name: "TENANCY_KUEUE_API", Value: "v1beta2"},
			}}, apiVersions: clusterV1beta1},
			renderArgs:      []string{"--kueue-api", "v1beta2"},
			wantAPIVersions: withGuardrails("kueue.x-k8s.io/v1beta2"),
		},
		"parameter over plugin.env": {
			app: application{plugin: &Plugin{
				Env:        []EnvEntry{{Name: "TENANCY_BACKEND", Value: "kai"}},
				Parameters: []Parameter{{Name: "backend", String: str("kueue")}},
			}, apiVersions: clusterV1beta1},
			renderArgs:      []string{"--backend", "kueue", "--kueue-api", "v1beta1"},
			wantAPIVersions: withGuardrails("kueue.x-k8s.io/v1beta1"),
		},
		"parameter named without a value leaves plugin.env in charge": {
			app: application{plugin: &Plugin{
				Env:        []EnvEntry{{Name: "TENANCY_BACKEND", Value: "kai"}},
				Parameters: []Parameter{{Name: "backend"}},
			}, apiVersions: clusterV1beta2},
			renderArgs:      []string{"--backend", "kai"},
			wantAPIVersions: apiVersionsKAI,
		},
	}
	repo := s.referenceRepo(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := s.generate(t, repo, appPath, s.environ(t, tc.app))
			if err != nil {
				t.Fatalf("GenerateManifest: %v", err)
			}
			got := s.objects(t, resp.Manifests...)
			want := s.objects(t, string(s.render(t, filepath.Join(repo, appPath), tc.renderArgs...)))
			if len(want) == 0 {
				t.Fatal("tenancy render printed no objects")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("plugin output differs from tenancy render %v (-want,+got):\n%s", tc.renderArgs, diff)
			}
			if diff := cmp.Diff(tc.wantAPIVersions, apiVersions(got)); diff != "" {
				t.Errorf("apiVersions (-want,+got):\n%s", diff)
			}
		})
	}
}

// apiVersionsKAI are the apiVersions of the reference agreement for KAI.
var apiVersionsKAI = withGuardrails("scheduling.k8s.io/v1", "scheduling.run.ai/v2")

// withGuardrails returns the sorted apiVersions of a reference render whose
// scheduler objects have the given ones: the guardrails add admission
// policies and NetworkPolicies, and Namespaces and quotas are v1.
func withGuardrails(scheduler ...string) []string {
	out := append([]string{"admissionregistration.k8s.io/v1", "networking.k8s.io/v1", "v1"}, scheduler...)
	sort.Strings(out)
	return out
}

func (s *suite) testGenerateFailsClosed(t *testing.T) {
	agreement := s.referenceAgreement(t)
	// Training lends more than it is guaranteed: invalid, at a known line.
	broken := strings.Replace(string(agreement), "guaranteed = 16\nlendable = 8", "guaranteed = 16\nlendable = 20", 1)
	if broken == string(agreement) {
		t.Fatal("the reference agreement changed; update the broken case")
	}
	brokenLine := 1 + strings.Count(broken[:strings.Index(broken, "lendable = 20")], "\n")

	tests := map[string]struct {
		files map[string][]byte
		app   application
		// wantErr must all appear in the error Argo CD shows on the Application.
		wantErr []string
	}{
		"invalid agreement": {
			files:   map[string][]byte{appPath + "/tenancy.toml": []byte(broken)},
			app:     application{apiVersions: clusterV1beta2},
			wantErr: []string{fmt.Sprintf("tenancy.toml:%d:", brokenLine), "teams.training.lendable", "tenancy argocd generate"},
		},
		"TOML syntax error": {
			files:   map[string][]byte{appPath + "/tenancy.toml": []byte("version = 1\nname = \"gpu-pool\"\n[teams.training\n")},
			app:     application{apiVersions: clusterV1beta2},
			wantErr: []string{"tenancy.toml:3"},
		},
		"invalid parameter": {
			files: map[string][]byte{appPath + "/tenancy.toml": agreement},
			app: application{plugin: &Plugin{Parameters: []Parameter{
				{Name: "backend", String: str("volcano")},
			}}},
			wantErr: []string{`ARGOCD_APP_PARAMETERS parameter backend: invalid options: backend "volcano": must be kueue or kai`},
		},
		"unknown parameter": {
			files: map[string][]byte{appPath + "/tenancy.toml": agreement},
			app: application{plugin: &Plugin{Parameters: []Parameter{
				{Name: "kueueApi", String: str("v1beta1")},
			}}},
			wantErr: []string{`unknown parameter "kueueApi"`},
		},
		"invalid plugin.env": {
			files: map[string][]byte{appPath + "/tenancy.toml": agreement},
			app: application{plugin: &Plugin{Env: []EnvEntry{
				{Name: "TENANCY_KUEUE_API", Value: "v1alpha1"},
			}}},
			wantErr: []string{`ARGOCD_ENV_TENANCY_KUEUE_API: invalid options: kueue API "v1alpha1"`},
		},
		"Application names the plugin for a path without tenancy.toml": {
			files:   map[string][]byte{appPath + "/README.md": []byte("x\n"), "tenancy.toml": agreement},
			app:     application{plugin: &Plugin{Name: "tenancy"}},
			wantErr: []string{"tenancy.toml: no such file"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			repo := newRepo(t, tc.files)
			s.generateFails(t, repo, s.environ(t, tc.app), tc.wantErr...)
		})
	}
}

// testGenerateBackendKey: the plugin renders for the backend the
// agreement's backend key names, as tenancy render does without --backend,
// and a parameter asking for a backend the key does not name fails the
// sync with the key's file:line:col.
func (s *suite) testGenerateBackendKey(t *testing.T) {
	reference := s.referenceAgreement(t)
	withKey := func(key string) map[string][]byte {
		return map[string][]byte{appPath + "/tenancy.toml": append([]byte(key+"\n"), reference...)}
	}
	t.Run("the agreement names kai", func(t *testing.T) {
		repo := newRepo(t, withKey(`backend = "kai"`))
		resp, err := s.generate(t, repo, appPath, s.environ(t, application{plugin: &Plugin{}, apiVersions: clusterV1beta2}))
		if err != nil {
			t.Fatalf("GenerateManifest: %v", err)
		}
		got := s.objects(t, resp.Manifests...)
		want := s.objects(t, string(s.render(t, filepath.Join(repo, appPath))))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("plugin output differs from tenancy render (-want,+got):\n%s", diff)
		}
		if diff := cmp.Diff(apiVersionsKAI, apiVersions(got)); diff != "" {
			t.Errorf("apiVersions (-want,+got):\n%s", diff)
		}
	})
	t.Run("a parameter asks for a backend the agreement does not name", func(t *testing.T) {
		repo := newRepo(t, withKey(`backend = "kueue"`))
		s.generateFails(t, repo, s.environ(t, application{plugin: &Plugin{Parameters: []Parameter{
			{Name: "backend", String: str("kai")},
		}}, apiVersions: clusterV1beta2}),
			"tenancy.toml:1:11: backend: the agreement is written for kueue, and ARGOCD_APP_PARAMETERS parameter backend asks for kai")
	})
}

// generateFails runs the plugin's generate command on appPath in repo and
// checks that it fails closed: an error holding each of wants, which Argo
// CD shows on the Application, and no manifests.
func (s *suite) generateFails(t *testing.T, repo string, env []string, wants ...string) {
	t.Helper()
	resp, err := s.generate(t, repo, appPath, env)
	if err == nil {
		t.Fatalf("GenerateManifest succeeded with %d manifests, want an error", len(resp.Manifests))
	}
	if n := len(resp.Manifests); n != 0 {
		t.Errorf("GenerateManifest returned %d manifests with its error", n)
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}

// testGenerateFleet: examples/fleet's agreement renders each part with
// the cluster parameter (or plugin.env TENANCY_CLUSTER), as tenancy render
// --cluster does, which is what examples/fleet's ApplicationSet sets per
// cluster; without either, the sync fails naming the parts.
func (s *suite) testGenerateFleet(t *testing.T) {
	fleet, err := os.ReadFile(filepath.Join(s.repoRoot, "examples", "fleet", "tenancy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	repo := newRepo(t, map[string][]byte{appPath + "/tenancy.toml": fleet})
	tests := map[string]struct {
		plugin *Plugin
		part   string
		// wantKind must be among the output's kinds: the manager's
		// MultiKueue objects, which no worker has.
		wantKind string
	}{
		"the manager, by parameter": {
			plugin:   &Plugin{Parameters: []Parameter{{Name: "cluster", String: str("hub")}}},
			part:     "hub",
			wantKind: "MultiKueueConfig",
		},
		"a worker, by parameter": {
			plugin:   &Plugin{Parameters: []Parameter{{Name: "cluster", String: str("east")}}},
			part:     "east",
			wantKind: "ClusterQueue",
		},
		"a worker, by plugin.env": {
			plugin:   &Plugin{Env: []EnvEntry{{Name: "TENANCY_CLUSTER", Value: "west"}}},
			part:     "west",
			wantKind: "ClusterQueue",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := s.generate(t, repo, appPath, s.environ(t, application{plugin: tc.plugin, apiVersions: clusterV1beta2}))
			if err != nil {
				t.Fatalf("GenerateManifest: %v", err)
			}
			got := s.objects(t, resp.Manifests...)
			want := s.objects(t, string(s.render(t, filepath.Join(repo, appPath), "--cluster", tc.part)))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("plugin output differs from tenancy render --cluster %s (-want,+got):\n%s", tc.part, diff)
			}
			kinds := map[string]bool{}
			for _, o := range got {
				kinds[fmt.Sprint(o["kind"])] = true
			}
			if !kinds[tc.wantKind] || (tc.part != "hub" && kinds["MultiKueueConfig"]) {
				t.Errorf("kinds %v: want %s, and MultiKueue's objects only in the manager's part", kinds, tc.wantKind)
			}
		})
	}
	t.Run("no cluster parameter", func(t *testing.T) {
		s.generateFails(t, repo, s.environ(t, application{plugin: &Plugin{Name: "tenancy"}, apiVersions: clusterV1beta2}),
			"tenancy.toml is a fleet of clusters: say which part to render with the plugin parameter cluster (one of hub, east, west)")
	})
}
