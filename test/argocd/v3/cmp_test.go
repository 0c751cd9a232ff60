// Package argocd_test runs the tenancy Config Management Plugin under Argo CD's
// own CMP server code, in-process: the server reads the project's real
// argocd/plugin.yaml, and runs a tenancy binary built from this checkout, the
// way the repo-server sidecar does. The client streams repositories to it with
// Argo CD's own util/cmp.SendRepoStream and builds the plugin's environment
// with Argo CD's own parameter encoding.
//
// This file is kept identical, up to the Argo CD major in import paths,
// across test/argocd/v2 and test/argocd/v3; TestSameAsV2 in v3 checks it.
package argocd_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/google/go-cmp/cmp"
	log "github.com/sirupsen/logrus"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/argoproj/argo-cd/v3/cmpserver"
	"github.com/argoproj/argo-cd/v3/cmpserver/apiclient"
	"github.com/argoproj/argo-cd/v3/cmpserver/plugin"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	argocmp "github.com/argoproj/argo-cd/v3/util/cmp"
)

var (
	// client talks to the in-process CMP server over its unix socket.
	client apiclient.ConfigManagementPluginServiceClient
	// tenancyBin is the binary plugin.yaml's generate command runs.
	tenancyBin string
	// repoRoot is this checkout; the plugin.yaml and tenancy.toml come from it.
	repoRoot string
)

func TestMain(m *testing.M) {
	flag.Parse()
	code, err := serve(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// serve builds tenancy, starts Argo CD's CMP server on a unix socket and runs
// the tests against it.
func serve(m *testing.M) (int, error) {
	var err error
	if repoRoot, err = filepath.Abs("../../.."); err != nil {
		return 0, err
	}
	// Unix socket paths are limited to about 108 bytes: keep the socket and
	// the server's work directory under a short /tmp directory, not t.TempDir.
	dir, err := os.MkdirTemp("/tmp", "cmp")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)

	if tenancyBin, err = buildTenancy(dir); err != nil {
		return 0, err
	}
	// The server runs plugin.yaml's command by name through PATH, as in the
	// sidecar image, and gives it its own environment plus the request's.
	for k, v := range map[string]string{
		"PATH":                      filepath.Dir(tenancyBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"ARGOCD_PLUGINSOCKFILEPATH": dir,
		"ARGOCD_CMP_WORKDIR":        filepath.Join(dir, "w"),
	} {
		os.Setenv(k, v)
	}
	// Nothing from the developer's shell may steer the plugin.
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PARAM_") || strings.HasPrefix(k, "ARGOCD_ENV_") || k == "ARGOCD_APP_PARAMETERS" || k == "KUBE_API_VERSIONS" {
			os.Unsetenv(k)
		}
	}
	// The server logs every failed command at error level; the failure
	// tests make it fail on purpose. Show its log only with -v.
	if !testing.Verbose() {
		log.SetOutput(io.Discard)
	}

	cfg, err := plugin.ReadPluginConfig(filepath.Join(repoRoot, "argocd"))
	if err != nil {
		return 0, fmt.Errorf("read argocd/plugin.yaml: %w", err)
	}
	srv, err := cmpserver.NewServer(plugin.CMPServerInitConstants{PluginConfig: *cfg})
	if err != nil {
		return 0, err
	}
	grpcServer, err := srv.CreateGRPC()
	if err != nil {
		return 0, err
	}
	lis, err := net.Listen("unix", cfg.Address())
	if err != nil {
		return 0, err
	}
	go grpcServer.Serve(lis)
	defer grpcServer.Stop()

	conn, c, err := apiclient.NewConfigManagementPluginClientSet(cfg.Address()).NewConfigManagementPluginClient()
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	client = c
	return m.Run(), nil
}

// buildTenancy builds cmd/tenancy from this checkout, or uses $TENANCY_BIN
// (for testing a release binary).
func buildTenancy(dir string) (string, error) {
	if bin := os.Getenv("TENANCY_BIN"); bin != "" {
		return filepath.Abs(bin)
	}
	bin := filepath.Join(dir, "bin", "tenancy")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/tenancy")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/tenancy: %v\n%s", err, out)
	}
	return bin, nil
}

// application is what of an Argo CD Application reaches the plugin.
type application struct {
	plugin *v1alpha1.ApplicationSourcePlugin // nil: no plugin section
	// apiVersions are the destination cluster's, as Argo CD lists them:
	// group/version and group/version/Kind.
	apiVersions []string
}

// environ builds the plugin's environment the way the repo-server does
// (reposerver/repository getPluginEnvs): build variables, KUBE_*, plugin.env
// prefixed with ARGOCD_ENV_, then Argo CD's own encoding of the parameters.
func (a application) environ(t *testing.T) []string {
	t.Helper()
	env := []string{
		"ARGOCD_APP_NAME=queues",
		"ARGOCD_APP_NAMESPACE=argocd",
		"ARGOCD_APP_REVISION=0123456789abcdef0123456789abcdef01234567",
		"ARGOCD_APP_SOURCE_PATH=apps/queues",
		"ARGOCD_APP_SOURCE_REPO_URL=https://git.example.com/platform/gpu.git",
		"ARGOCD_APP_SOURCE_TARGET_REVISION=main",
		"KUBE_VERSION=1.33.0",
		"KUBE_API_VERSIONS=" + strings.Join(a.apiVersions, ","),
	}
	if a.plugin == nil {
		return env
	}
	for _, e := range a.plugin.Env {
		env = append(env, "ARGOCD_ENV_"+e.Name+"="+e.Value)
	}
	params, err := a.plugin.Parameters.Environ()
	if err != nil {
		t.Fatal(err)
	}
	return append(env, params...)
}

func str(s string) *string { return &s }

// Destination clusters.
var (
	clusterV1beta2 = []string{"apps/v1", "apps/v1/Deployment", "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta1/ClusterQueue", "kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta2/ClusterQueue", "v1", "v1/Namespace"}
	clusterV1beta1 = []string{"apps/v1", "apps/v1/Deployment", "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta1/ClusterQueue", "v1", "v1/Namespace"}
	clusterBare    = []string{"apps/v1", "v1"}
)

// appPath is where the Applications' source path points in each repository.
const appPath = "apps/queues"

// newRepo writes a repository checkout: files relative to its root.
func newRepo(t *testing.T, files map[string][]byte) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func referenceAgreement(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "tenancy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// referenceRepo holds the reference agreement at appPath, and beside it
// things the plugin must not read.
func referenceRepo(t *testing.T) string {
	return newRepo(t, map[string][]byte{
		"README.md":                 []byte("# GPU pool\n"),
		appPath + "/tenancy.toml":   referenceAgreement(t),
		"apps/other/tenancy.toml":   []byte("this is not TOML and must not be read\n"),
		"apps/queues/notes/old.txt": []byte("kept for history\n"),
	})
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// discover asks the server whether the plugin supports the app, as the
// repo-server does when an Application names no plugin.
func discover(t *testing.T, repo, app string, env []string) *apiclient.RepositoryResponse {
	t.Helper()
	stream, err := client.MatchRepository(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := argocmp.SendRepoStream(stream.Context(), filepath.Join(repo, app), repo, stream, env, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		t.Fatalf("MatchRepository: %v", err)
	}
	return resp
}

// generate runs the plugin's generate command on the app, as the
// repo-server does on every refresh.
func generate(t *testing.T, repo, app string, env []string) (*apiclient.ManifestResponse, error) {
	t.Helper()
	stream, err := client.GenerateManifest(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := argocmp.SendRepoStream(stream.Context(), filepath.Join(repo, app), repo, stream, env, nil); err != nil {
		t.Fatal(err)
	}
	return stream.CloseAndRecv()
}

// render runs "tenancy render ARGS" in dir and returns its stdout.
func render(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(tenancyBin, append([]string{"render"}, args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tenancy render %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// objects parses manifests the way the repo-server does with a plugin's
// output (gitops-engine kube.SplitYAML).
func objects(t *testing.T, manifests ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range manifests {
		objs, err := kube.SplitYAML([]byte(m))
		if err != nil {
			t.Fatalf("parse manifests: %v", err)
		}
		for _, o := range objs {
			out = append(out, o.Object)
		}
	}
	return out
}

func apiVersions(objs []map[string]any) []string {
	seen := map[string]bool{}
	for _, o := range objs {
		seen[fmt.Sprint(o["apiVersion"])] = true
	}
	var out []string
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func TestDiscovery(t *testing.T) {
	agreement := referenceAgreement(t)
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
			resp := discover(t, repo, appPath, application{apiVersions: clusterV1beta2}.environ(t))
			if !resp.IsDiscoveryEnabled {
				t.Error("discovery is not enabled: plugin.yaml lost its discover section")
			}
			if resp.IsSupported != tc.want {
				t.Errorf("IsSupported = %v, want %v", resp.IsSupported, tc.want)
			}
		})
	}
}

func TestParametersAnnounced(t *testing.T) {
	repo := referenceRepo(t)
	stream, err := client.GetParametersAnnouncement(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := argocmp.SendRepoStream(stream.Context(), filepath.Join(repo, appPath), repo, stream, nil, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range resp.ParameterAnnouncements {
		got = append(got, p.Name+"="+p.String_)
	}
	if diff := cmp.Diff([]string{"backend=kueue", "kueueAPI="}, got); diff != "" {
		t.Errorf("announced parameters (-want,+got):\n%s", diff)
	}
}

func TestPluginConfiguration(t *testing.T) {
	resp, err := client.CheckPluginConfiguration(callCtx(t), &emptypb.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.IsDiscoveryConfigured || resp.ProvideGitCreds {
		t.Errorf("CheckPluginConfiguration = %+v, want discovery and no Git credentials", resp)
	}
}

func TestGenerate(t *testing.T) {
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
			wantAPIVersions: []string{"kueue.x-k8s.io/v1beta2", "v1"},
		},
		"no parameters, cluster with only Kueue v1beta1": {
			app:             application{plugin: &v1alpha1.ApplicationSourcePlugin{Name: "tenancy"}, apiVersions: clusterV1beta1},
			renderArgs:      []string{"--kueue-api", "v1beta1"},
			wantAPIVersions: []string{"kueue.x-k8s.io/v1beta1", "v1"},
		},
		"no parameters, cluster without Kueue": {
			app:             application{plugin: &v1alpha1.ApplicationSourcePlugin{}, apiVersions: clusterBare},
			renderArgs:      []string{"--kueue-api", "v1beta2"},
			wantAPIVersions: []string{"kueue.x-k8s.io/v1beta2", "v1"},
		},
		"parameter backend kai": {
			app: application{plugin: &v1alpha1.ApplicationSourcePlugin{Parameters: v1alpha1.ApplicationSourcePluginParameters{
				{Name: "backend", String_: str("kai")},
			}}, apiVersions: clusterV1beta2},
			renderArgs:      []string{"--backend", "kai"},
			wantAPIVersions: apiVersionsKAI,
		},
		"parameter kueueAPI over the cluster's versions": {
			app: application{plugin: &v1alpha1.ApplicationSourcePlugin{Parameters: v1alpha1.ApplicationSourcePluginParameters{
				{Name: "kueueAPI", String_: str("v1beta1")},
			}}, apiVersions: clusterV1beta2},
			renderArgs:      []string{"--kueue-api", "v1beta1"},
			wantAPIVersions: []string{"kueue.x-k8s.io/v1beta1", "v1"},
		},
		"plugin.env backend kai": {
			app: application{plugin: &v1alpha1.ApplicationSourcePlugin{Env: v1alpha1.Env{
				{Name: "TENANCY_BACKEND", Value: "kai"},
			}}, apiVersions: clusterV1beta2},
			renderArgs:      []string{"--backend", "kai"},
			wantAPIVersions: apiVersionsKAI,
		},
		"plugin.env Kueue API over the cluster's versions": {
			app: application{plugin: &v1alpha1.ApplicationSourcePlugin{Env: v1alpha1.Env{
				{Name: "TENANCY_KUEUE_API", Value: "v1beta2"},
			}}, apiVersions: clusterV1beta1},
			renderArgs:      []string{"--kueue-api", "v1beta2"},
			wantAPIVersions: []string{"kueue.x-k8s.io/v1beta2", "v1"},
		},
		"parameter over plugin.env": {
			app: application{plugin: &v1alpha1.ApplicationSourcePlugin{
				Env:        v1alpha1.Env{{Name: "TENANCY_BACKEND", Value: "kai"}},
				Parameters: v1alpha1.ApplicationSourcePluginParameters{{Name: "backend", String_: str("kueue")}},
			}, apiVersions: clusterV1beta1},
			renderArgs:      []string{"--backend", "kueue", "--kueue-api", "v1beta1"},
			wantAPIVersions: []string{"kueue.x-k8s.io/v1beta1", "v1"},
		},
		"parameter named without a value leaves plugin.env in charge": {
			app: application{plugin: &v1alpha1.ApplicationSourcePlugin{
				Env:        v1alpha1.Env{{Name: "TENANCY_BACKEND", Value: "kai"}},
				Parameters: v1alpha1.ApplicationSourcePluginParameters{{Name: "backend"}},
			}, apiVersions: clusterV1beta2},
			renderArgs:      []string{"--backend", "kai"},
			wantAPIVersions: apiVersionsKAI,
		},
	}
	repo := referenceRepo(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := generate(t, repo, appPath, tc.app.environ(t))
			if err != nil {
				t.Fatalf("GenerateManifest: %v", err)
			}
			got := objects(t, resp.Manifests...)
			want := objects(t, string(render(t, filepath.Join(repo, appPath), tc.renderArgs...)))
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
var apiVersionsKAI = []string{"scheduling.k8s.io/v1", "scheduling.run.ai/v2", "v1"}

func TestGenerateFailsClosed(t *testing.T) {
	agreement := referenceAgreement(t)
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
			app: application{plugin: &v1alpha1.ApplicationSourcePlugin{Parameters: v1alpha1.ApplicationSourcePluginParameters{
				{Name: "backend", String_: str("volcano")},
			}}},
			wantErr: []string{`ARGOCD_APP_PARAMETERS parameter backend: invalid options: backend "volcano": must be kueue or kai`},
		},
		"unknown parameter": {
			files: map[string][]byte{appPath + "/tenancy.toml": agreement},
			app: application{plugin: &v1alpha1.ApplicationSourcePlugin{Parameters: v1alpha1.ApplicationSourcePluginParameters{
				{Name: "kueueApi", String_: str("v1beta1")},
			}}},
			wantErr: []string{`unknown parameter "kueueApi"`},
		},
		"invalid plugin.env": {
			files: map[string][]byte{appPath + "/tenancy.toml": agreement},
			app: application{plugin: &v1alpha1.ApplicationSourcePlugin{Env: v1alpha1.Env{
				{Name: "TENANCY_KUEUE_API", Value: "v1alpha1"},
			}}},
			wantErr: []string{`ARGOCD_ENV_TENANCY_KUEUE_API: invalid options: kueue API "v1alpha1"`},
		},
		"Application names the plugin for a path without tenancy.toml": {
			files:   map[string][]byte{appPath + "/README.md": []byte("x\n"), "tenancy.toml": agreement},
			app:     application{plugin: &v1alpha1.ApplicationSourcePlugin{Name: "tenancy"}},
			wantErr: []string{"tenancy.toml: no such file"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			repo := newRepo(t, tc.files)
			resp, err := generate(t, repo, appPath, tc.app.environ(t))
			if err == nil {
				t.Fatalf("GenerateManifest succeeded with %d manifests, want an error", len(resp.GetManifests()))
			}
			if n := len(resp.GetManifests()); n != 0 {
				t.Errorf("GenerateManifest returned %d manifests with its error", n)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q:\n%v", want, err)
				}
			}
		})
	}
}
