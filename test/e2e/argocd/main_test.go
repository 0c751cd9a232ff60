// Package argocd runs the whole GitOps loop users run: a commit to
// tenancy.toml lands in a Git repository, Argo CD's repo-server asks the
// tenancy plugin (Argo CD's own argocd-cmp-server running argocd/plugin.yaml)
// to render it, the application controller diffs the result against the
// cluster and syncs it, and Kueue admits by the new quotas.
//
// Everything is real and on loopback: etcd, kube-apiserver,
// kube-controller-manager and Kueue from the control-plane suite (the
// destination cluster, Argo CD's "in-cluster"), Argo CD's
// argocd-application-controller, argocd-repo-server and argocd-cmp-server
// (one binary built from Argo CD's Go module, cached by version: v3 by
// default, v2.14 with TENANCY_ARGOCD=v2), Redis from
// Debian's redis-server package, and a Git repository served over smart HTTP
// by git http-backend behind Go's net/http/cgi. Nothing is simulated except
// the nodes: no kubelet runs, so Jobs are admitted by Kueue's quota alone and
// never get Pods.
package argocd

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/checkreport"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// env is what every check shares: the control plane, Argo CD and the Git
// repository. Checks run in order, each starting from the reference
// agreement synced.
var env struct {
	cp     *controlplane.ControlPlane
	argocd *binaries.Built
	// tenancy is the binary the windows controller runs: the plugin
	// image's (the rendered Deployment runs that image), or the host build
	// with TENANCY_ARGOCD_IMAGE=off. Not binDir's tenancy, which is then
	// imagewrap: bwrap without network cannot reach the API server.
	tenancy string
	// windowFields is what `tenancy argocd ignore-differences` prints:
	// the Application fields the windows need, spliced into application().
	windowFields map[string]any
	repo         *gitRepo
	repoRoot     string
	// binaries and kueueDir are what the control plane was started from;
	// the fleet check starts its workers' API servers from them.
	binaries map[string]string
	kueueDir string
	startErr error
	startup  time.Duration
}

var keep = flag.Bool("keep", false, "keep the temporary directory (state and logs) after the run")

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(checkreport.Main(m, checkreport.Suite{
		Name: "e2e/argocd",
		Keep: *keep,
		SetUp: func(ctx context.Context, dir string) (func(), error) {
			began := time.Now()
			env.startErr = setUp(ctx, dir)
			env.startup = time.Since(began)
			stop := func() {
				if env.cp != nil {
					env.cp.Stop()
				}
				if env.repo != nil {
					env.repo.close()
				}
			}
			return stop, env.startErr
		},
		Report: printReport,
	}))
}

// setUp builds or reuses every binary, starts the control plane with Argo
// CD's and KAI's CRDs, then the Git server, Redis and Argo CD.
func setUp(ctx context.Context, dir string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	env.repoRoot = filepath.Clean(filepath.Join(wd, "..", "..", ".."))
	tools := filepath.Join(wd, "..", "tools")
	cache, err := binaries.DefaultCacheDir()
	if err != nil {
		return err
	}
	t0 := time.Now()
	// Only what the destination cluster needs: no nodes run here, so not
	// every component of binaries.Components.
	paths := map[string]string{}
	kueueDir := ""
	for _, c := range binaries.Components {
		switch c.Name {
		case "etcd", "kube-apiserver", "kube-controller-manager", "kueue":
		default:
			continue
		}
		b, err := binaries.EnsureComponent(ctx, tools, cache, c, os.Stderr)
		if err != nil {
			return fmt.Errorf("control-plane binaries: %w", err)
		}
		paths[c.Name] = b.Path
		if c.Name == "kueue" {
			kueueDir = b.ModuleDir
		}
	}
	argo := binaries.ArgoCD
	switch v := os.Getenv("TENANCY_ARGOCD"); v {
	case "", "v3":
	case "v2":
		argo = binaries.ArgoCDV2
	default:
		return fmt.Errorf("TENANCY_ARGOCD=%q: want v3 (the default) or v2", v)
	}
	if env.argocd, err = binaries.EnsureComponent(ctx, tools, cache, argo, os.Stderr); err != nil {
		return fmt.Errorf("argocd binary: %w", err)
	}
	fmt.Fprintf(os.Stderr, "e2e/argocd: binaries ready in %s: argocd %s\n", time.Since(t0).Round(time.Millisecond), env.argocd.Version)

	// The plugin runs tenancy from the sidecar's PATH: build it into a
	// directory of its own that goes first on the CMP server's PATH.
	binDir := filepath.Join(dir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(binDir, "tenancy"), "./cmd/tenancy")
	build.Dir = env.repoRoot
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build tenancy: %w\n%s", err, out)
	}
	env.tenancy = filepath.Join(binDir, "tenancy")
	// The Application takes the fields the windows need from the command
	// docs/argocd.md tells users to run, not from a copy written here.
	out, err := exec.CommandContext(ctx, env.tenancy, "argocd", "ignore-differences").Output()
	if err != nil {
		return fmt.Errorf("tenancy argocd ignore-differences: %w", err)
	}
	if err := yaml.Unmarshal(out, &env.windowFields); err != nil {
		return fmt.Errorf("tenancy argocd ignore-differences printed no YAML: %w\n%s", err, out)
	}
	if len(windowField("ignoreDifferences")) == 0 || len(windowField("syncPolicy", "syncOptions")) == 0 {
		return fmt.Errorf("tenancy argocd ignore-differences printed no spec.ignoreDifferences or spec.syncPolicy.syncOptions:\n%s", out)
	}
	// What the sidecar runs is the plugin image: its binary, from its
	// filesystem, as its user, read-only. TENANCY_ARGOCD_IMAGE=off keeps the
	// host binary (for a machine without bwrap).
	if os.Getenv("TENANCY_ARGOCD_IMAGE") != "off" {
		if err := installPluginImage(ctx, dir, binDir); err != nil {
			return err
		}
	}

	crds, err := extraCRDs(env.argocd.ModuleDir, env.repoRoot)
	if err != nil {
		return err
	}
	env.binaries, env.kueueDir = paths, kueueDir
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Binaries:  paths,
		KueueDir:  kueueDir,
		Dir:       dir,
		ExtraCRDs: crds,
		Log:       os.Stderr,
	})
	if err != nil {
		return fmt.Errorf("start control plane: %w", err)
	}
	env.cp = cp

	if env.repo, err = newGitRepo(ctx, filepath.Join(dir, "git")); err != nil {
		return fmt.Errorf("git repository: %w", err)
	}
	if err := startArgoCD(ctx, dir, binDir); err != nil {
		return fmt.Errorf("argo cd: %w", err)
	}
	return nil
}

// report holds every check's outcome for the closing report.
var report checkreport.Report

// begin starts a check (see checkreport.Report.Begin).
func begin(t *testing.T) {
	t.Helper()
	report.Begin(t, env.cp, env.startErr, 2500)
}

func printReport(total time.Duration) {
	records, counts := report.Records()
	if len(records) == 0 {
		return
	}
	fmt.Println()
	fmt.Println("tenancy e2e report: the Argo CD loop")
	if env.argocd != nil {
		fmt.Printf("  argo cd %s, start-up (binaries, control plane, argo cd): %s\n", env.argocd.Version, env.startup.Round(time.Millisecond))
	}
	for _, r := range records {
		fmt.Printf("  %-4s %-45s %s\n", r.Result, r.Name, r.Duration.Round(time.Millisecond))
	}
	if env.cp != nil {
		mem := env.cp.MemoryMiB()
		var parts []string
		for name, mib := range mem {
			parts = append(parts, fmt.Sprintf("%s %d", name, mib))
		}
		sort.Strings(parts)
		fmt.Printf("  resident memory (MiB): %s\n", strings.Join(parts, ", "))
	}
	fmt.Printf("  %d passed, %d failed, %d skipped in %s\n", counts["PASS"], counts["FAIL"], counts["SKIP"], total.Round(time.Millisecond))
}
