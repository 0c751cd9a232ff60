package argocd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// argoNamespace is where Argo CD's settings and the Application live, as in
// Argo CD's own install.
const argoNamespace = "argocd"

// extraCRDs are Argo CD's CRDs (Application, AppProject, ApplicationSet),
// from its module's manifests/crds, and KAI
// Scheduler's Queue CRD from shared/ beside the repository (KAI's Go module
// is not reachable here; the renderer's tests read the same file), so the
// plugin's kai output has somewhere to go.
func extraCRDs(argoDir, repoRoot string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, path := range []string{
		filepath.Join(argoDir, "manifests", "crds", "application-crd.yaml"),
		filepath.Join(argoDir, "manifests", "crds", "appproject-crd.yaml"),
		filepath.Join(argoDir, "manifests", "crds", "applicationset-crd.yaml"),
		filepath.Join(repoRoot, "..", "shared", "crds", "kai", "scheduling.run.ai_queues.yaml"),
	} {
		objs, err := controlplane.ReadManifestFile(path)
		if err != nil {
			return nil, fmt.Errorf("read CRDs: %w", err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// argoSettings are the ConfigMaps and the Secret Argo CD's components read,
// taken from the release's own manifests/install.yaml (so their names and
// the app.kubernetes.io/part-of label Argo CD's settings informer selects
// on are Argo CD's), with tenancy's health checks merged into argocd-cm
// from argocd/install/argocd-cm-health.yaml, the file users install.
func argoSettings(argoDir, repoRoot string) ([]*unstructured.Unstructured, error) {
	install, err := controlplane.ReadManifestFile(filepath.Join(argoDir, "manifests", "install.yaml"))
	if err != nil {
		return nil, err
	}
	health, err := controlplane.ReadManifestFile(filepath.Join(repoRoot, "argocd", "install", "argocd-cm-health.yaml"))
	if err != nil {
		return nil, err
	}
	if len(health) != 1 || health[0].GetName() != "argocd-cm" {
		return nil, errors.New("argocd/install/argocd-cm-health.yaml: want one ConfigMap argocd-cm")
	}
	healthData, _, _ := unstructured.NestedStringMap(health[0].Object, "data")
	if len(healthData) == 0 {
		return nil, errors.New("argocd/install/argocd-cm-health.yaml: no data")
	}
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": argoNamespace},
	}}
	out := []*unstructured.Unstructured{ns}
	for _, o := range install {
		if o.GetKind() != "ConfigMap" && o.GetKind() != "Secret" {
			continue
		}
		o.SetNamespace(argoNamespace)
		if o.GetName() == "argocd-cm" {
			data, _, _ := unstructured.NestedStringMap(o.Object, "data")
			if data == nil {
				data = map[string]string{}
			}
			for k, v := range healthData {
				data[k] = v
			}
			if err := unstructured.SetNestedStringMap(o.Object, data, "data"); err != nil {
				return nil, err
			}
		}
		out = append(out, o)
	}
	// Argo CD's API server creates the default project on start-up; the loop
	// runs no API server, so it is created here as that code does.
	out = append(out, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "AppProject",
		"metadata":   map[string]any{"name": "default", "namespace": argoNamespace},
		"spec": map[string]any{
			"sourceRepos":              []any{"*"},
			"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
			"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
		},
	}})
	return out, nil
}

// startArgoCD installs the settings and starts Redis, the CMP server with
// argocd/plugin.yaml, the repo-server, the application controller and the
// applicationset controller, and waits until each answers.
func startArgoCD(ctx context.Context, dir, binDir string) error {
	settings, err := argoSettings(env.argocd.ModuleDir, env.repoRoot)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if _, err := env.cp.Applier.Apply(ctx, settings, false); err != nil {
		return fmt.Errorf("install settings: %w", err)
	}

	redis, err := exec.LookPath("redis-server")
	if err != nil {
		return errors.New("redis-server not found: install Debian's redis-server package (.ci/run does)")
	}
	ports, err := controlplane.FreePorts(7)
	if err != nil {
		return err
	}
	redisPort, repoPort, repoMetrics, ctrlMetrics := ports[0], ports[1], ports[2], ports[3]
	appsetMetrics, appsetProbe, appsetWebhook := ports[4], ports[5], ports[6]
	redisAddr := hostPort(redisPort)
	if err := env.cp.StartExtra("redis", redis, []string{
		"--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1",
		// A cache only: nothing to persist.
		"--save", "", "--appendonly", "no", "--dir", dir,
	}, nil); err != nil {
		return err
	}
	if err := waitTCP(ctx, redisAddr, 20*time.Second); err != nil {
		return fmt.Errorf("redis: %w", err)
	}

	// The CMP server reads plugin.yaml from --config-dir-path and listens on
	// <ARGOCD_PLUGINSOCKFILEPATH>/<plugin name>.sock, where the repo-server
	// looks for plugins: in a pod, the shared plugins volume.
	cmpConfig := filepath.Join(dir, "cmp-config")
	plugins := filepath.Join(dir, "cmp-plugins")
	home := filepath.Join(dir, "home")
	for _, d := range []string{cmpConfig, plugins, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	pluginYAML, err := os.ReadFile(filepath.Join(env.repoRoot, "argocd", "plugin.yaml"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cmpConfig, "plugin.yaml"), pluginYAML, 0o644); err != nil {
		return err
	}
	common := []string{
		"ARGOCD_PLUGINSOCKFILEPATH=" + plugins,
		"HOME=" + home,
		"TMPDIR=" + filepath.Join(dir, "tmp"),
		// The repo-server would otherwise set up a GnuPG keyring for
		// commit verification, which the loop does not use.
		"ARGOCD_GPG_ENABLED=false",
	}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return err
	}
	bin := env.argocd.Path
	if err := env.cp.StartExtra("argocd-cmp-server", bin, []string{
		"--config-dir-path", cmpConfig, "--logformat", "text", "--loglevel", "info",
	}, append([]string{
		"ARGOCD_BINARY_NAME=argocd-cmp-server",
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
	}, common...)); err != nil {
		return err
	}
	if err := waitFile(ctx, filepath.Join(plugins, "tenancy.sock"), 30*time.Second); err != nil {
		return fmt.Errorf("argocd-cmp-server: %w", err)
	}

	if err := env.cp.StartExtra("argocd-repo-server", bin, []string{
		"--port", strconv.Itoa(repoPort),
		"--address", "127.0.0.1",
		"--metrics-address", "127.0.0.1",
		"--metrics-port", strconv.Itoa(repoMetrics),
		"--disable-tls",
		"--redis", redisAddr,
		"--logformat", "text",
	}, append([]string{"ARGOCD_BINARY_NAME=argocd-repo-server"}, common...)); err != nil {
		return err
	}
	if err := waitTCP(ctx, hostPort(repoPort), 60*time.Second); err != nil {
		return fmt.Errorf("argocd-repo-server: %w", err)
	}

	if err := env.cp.StartExtra("argocd-application-controller", bin, []string{
		"--kubeconfig", env.cp.Kubeconfig,
		"--namespace", argoNamespace,
		"--repo-server", hostPort(repoPort),
		"--repo-server-plaintext",
		"--redis", redisAddr,
		"--metrics-port", strconv.Itoa(ctrlMetrics),
		// Periodic comparison; the checks ask for refreshes themselves.
		"--app-resync", "60",
		"--status-processors", "2",
		"--operation-processors", "2",
		"--self-heal-timeout-seconds", "1",
		// Argo CD 3 keeps each resource's health in the resource tree (in
		// Redis, for the UI and API) and no longer in the Application's
		// status.resources unless asked to. The loop runs no API server to
		// read the tree through, so it asks: the health is computed by the
		// same Lua checks either way.
		"--persist-resource-health=true",
		"--logformat", "text",
	}, append([]string{
		"ARGOCD_BINARY_NAME=argocd-application-controller",
		// The destination is Argo CD's in-cluster, https://kubernetes.default.svc,
		// as docs/argocd.md tells users to write. Out of a pod there is no
		// service-account token; Argo CD's own switch for running its
		// controller outside the cluster (its e2e tests use it) makes
		// in-cluster mean $KUBECONFIG instead.
		"ARGOCD_FAKE_IN_CLUSTER=true",
		"KUBECONFIG=" + env.cp.Kubeconfig,
	}, common...)); err != nil {
		return err
	}
	if err := waitHTTP(ctx, fmt.Sprintf("http://%s/healthz", hostPort(ctrlMetrics)), 60*time.Second); err != nil {
		return fmt.Errorf("argocd-application-controller: %w", err)
	}

	// The applicationset controller turns an ApplicationSet into
	// Applications (the fleet's one per cluster); its list generator asks
	// the repo-server nothing, but it is given one as in an install. It
	// logs that it cannot make its Git webhook handler (argocd-secret has
	// no server.secretkey: Argo CD's API server writes it, and none runs);
	// generators run without it.
	if err := env.cp.StartExtra("argocd-applicationset-controller", bin, []string{
		"--kubeconfig", env.cp.Kubeconfig,
		"--namespace", argoNamespace,
		"--argocd-repo-server", hostPort(repoPort),
		"--repo-server-plaintext",
		"--metrics-addr", hostPort(appsetMetrics),
		"--probe-addr", hostPort(appsetProbe),
		"--webhook-addr", hostPort(appsetWebhook),
		"--logformat", "text",
	}, append([]string{
		"ARGOCD_BINARY_NAME=argocd-applicationset-controller",
		// controller-runtime's client reads $KUBECONFIG, not the flag.
		"KUBECONFIG=" + env.cp.Kubeconfig,
	}, common...)); err != nil {
		return err
	}
	// It registers no health checks, so its probe endpoint answers 404;
	// the metrics endpoint answers once the manager has started.
	if err := waitHTTP(ctx, fmt.Sprintf("http://%s/metrics", hostPort(appsetMetrics)), 60*time.Second); err != nil {
		return fmt.Errorf("argocd-applicationset-controller: %w", err)
	}
	return nil
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

func waitTCP(ctx context.Context, addr string, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, nil
		}
		c.Close()
		return true, nil
	})
}

func waitFile(ctx context.Context, path string, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		_, err := os.Stat(path)
		return err == nil, nil
	})
}

func waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		resp, err := client.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// gitRepo is a bare repository served over smart HTTP by git http-backend
// (through net/http/cgi, as a web server would run it), and a work tree
// the checks commit to and push from.
type gitRepo struct {
	// URL is the repository's clone URL.
	URL  string
	bare string
	work string
	srv  *http.Server
}

func newGitRepo(ctx context.Context, dir string) (*gitRepo, error) {
	execPath, err := exec.CommandContext(ctx, "git", "--exec-path").Output()
	if err != nil {
		return nil, fmt.Errorf("git --exec-path: %w", err)
	}
	r := &gitRepo{bare: filepath.Join(dir, "gpu.git"), work: filepath.Join(dir, "work")}
	for _, args := range [][]string{
		{"init", "-q", "--bare", "-b", "main", r.bare},
		{"init", "-q", "-b", "main", r.work},
	} {
		if out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + dir, "GIT_HTTP_EXPORT_ALL=1"},
	}
	r.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(l)
	r.URL = "http://" + l.Addr().String() + "/gpu.git"
	return r, nil
}

// commit writes files (path relative to the repository root, nil content
// deletes), commits them and pushes to the served repository. It returns
// the new commit's SHA.
func (r *gitRepo) commit(ctx context.Context, msg string, files map[string][]byte) (string, error) {
	for path, data := range files {
		full := filepath.Join(r.work, path)
		if data == nil {
			if err := os.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{
		{"add", "-A"},
		{"-c", "user.name=e2e", "-c", "user.email=e2e@tenancy.invalid", "commit", "-q", "--allow-empty", "-m", msg},
		{"push", "-q", r.bare, "main"},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = r.work
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "HEAD")
	cmd.Dir = r.work
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func (r *gitRepo) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.srv.Shutdown(ctx)
}
