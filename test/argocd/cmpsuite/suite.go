package cmpsuite

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Run builds tenancy, starts argo's CMP server on a unix socket and runs
// every check against it, each as a subtest. It must be called from a test in
// test/argocd/<major>: this checkout's root is three directories up.
func Run(t *testing.T, argo ArgoCD) {
	s := start(t, argo)
	t.Run("Discovery", s.testDiscovery)
	t.Run("ParametersAnnounced", s.testParametersAnnounced)
	t.Run("PluginConfiguration", s.testPluginConfiguration)
	t.Run("Generate", s.testGenerate)
	t.Run("GenerateFailsClosed", s.testGenerateFailsClosed)
	t.Run("GenerateBackendKey", s.testGenerateBackendKey)
	t.Run("GenerateFleet", s.testGenerateFleet)
	t.Run("InstallComponent", s.testInstallComponent)
}

type suite struct {
	argo ArgoCD
	// client talks to the in-process CMP server over its unix socket.
	client Client
	// tenancyBin is the binary plugin.yaml's generate command runs.
	tenancyBin string
	// repoRoot is this checkout; the plugin.yaml and tenancy.toml come from it.
	repoRoot string
}

func start(t *testing.T, argo ArgoCD) *suite {
	s := &suite{argo: argo}
	var err error
	if s.repoRoot, err = filepath.Abs("../../.."); err != nil {
		t.Fatal(err)
	}
	// Unix socket paths are limited to about 108 bytes: keep the socket and
	// the server's work directory under a short /tmp directory, not t.TempDir.
	dir, err := os.MkdirTemp("/tmp", "cmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })

	if s.tenancyBin, err = s.buildTenancy(dir); err != nil {
		t.Fatal(err)
	}
	// The server runs plugin.yaml's command by name through PATH, as in the
	// sidecar image, and gives it its own environment plus the request's.
	for k, v := range map[string]string{
		"PATH":                      filepath.Dir(s.tenancyBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"ARGOCD_PLUGINSOCKFILEPATH": dir,
		"ARGOCD_CMP_WORKDIR":        filepath.Join(dir, "w"),
	} {
		t.Setenv(k, v)
	}
	// Nothing from the developer's shell may steer the plugin.
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PARAM_") || strings.HasPrefix(k, "ARGOCD_ENV_") || k == "ARGOCD_APP_PARAMETERS" || k == "KUBE_API_VERSIONS" {
			t.Setenv(k, v) // restored after the test
			os.Unsetenv(k)
		}
	}
	// The server logs every failed command at error level; the failure
	// tests make it fail on purpose. Show its log only with -v.
	logs := io.Discard
	if testing.Verbose() {
		logs = os.Stderr
	}
	if s.client, err = argo.Serve(filepath.Join(s.repoRoot, "argocd"), logs); err != nil {
		t.Fatalf("start Argo CD's CMP server: %v", err)
	}
	t.Cleanup(func() { s.client.Close() })
	return s
}

// buildTenancy builds cmd/tenancy from this checkout, or uses $TENANCY_BIN
// (for testing a release binary).
func (s *suite) buildTenancy(dir string) (string, error) {
	if bin := os.Getenv("TENANCY_BIN"); bin != "" {
		return filepath.Abs(bin)
	}
	bin := filepath.Join(dir, "bin", "tenancy")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/tenancy")
	cmd.Dir = s.repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/tenancy: %v\n%s", err, out)
	}
	return bin, nil
}

// application is what of an Argo CD Application reaches the plugin.
type application struct {
	plugin *Plugin // nil: no plugin section
	// apiVersions are the destination cluster's, as Argo CD lists them:
	// group/version and group/version/Kind.
	apiVersions []string
}

// environ builds the plugin's environment the way the repo-server does
// (reposerver/repository getPluginEnvs): build variables, KUBE_*, plugin.env
// prefixed with ARGOCD_ENV_, then Argo CD's own encoding of the parameters.
func (s *suite) environ(t *testing.T, a application) []string {
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
	params, err := s.argo.ParametersEnviron(a.plugin.Parameters)
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

func (s *suite) referenceAgreement(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.repoRoot, "tenancy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// referenceRepo holds the reference agreement at appPath, and beside it
// things the plugin must not read.
func (s *suite) referenceRepo(t *testing.T) string {
	return newRepo(t, map[string][]byte{
		"README.md":                 []byte("# GPU pool\n"),
		appPath + "/tenancy.toml":   s.referenceAgreement(t),
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
func (s *suite) discover(t *testing.T, repo, app string, env []string) RepositoryResponse {
	t.Helper()
	stream, err := s.client.MatchRepository(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.SendRepoStream(filepath.Join(repo, app), repo, env); err != nil {
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
func (s *suite) generate(t *testing.T, repo, app string, env []string) (ManifestResponse, error) {
	t.Helper()
	stream, err := s.client.GenerateManifest(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.SendRepoStream(filepath.Join(repo, app), repo, env); err != nil {
		t.Fatal(err)
	}
	return stream.CloseAndRecv()
}

// render runs "tenancy render ARGS" in dir and returns its stdout.
func (s *suite) render(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(s.tenancyBin, append([]string{"render"}, args...)...)
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
func (s *suite) objects(t *testing.T, manifests ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range manifests {
		objs, err := s.argo.SplitYAML([]byte(m))
		if err != nil {
			t.Fatalf("parse manifests: %v", err)
		}
		out = append(out, objs...)
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
