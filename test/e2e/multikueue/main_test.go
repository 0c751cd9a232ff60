// Package multikueue proves, with Kueue's own MultiKueue across three real
// control planes, that one agreement rendered per cluster
// (`tenancy render --cluster NAME examples/fleet/tenancy.toml`) behaves as
// one fleet: the manager admits each Job against the fleet-wide quota and
// dispatches it to a worker that has room, reclaim and never-lent GPUs hold
// across the workers, a lost worker's Jobs move to the other, and the
// guardrails hold on every cluster.
//
// TestMain starts a manager and two workers at once, each etcd,
// kube-apiserver, kube-controller-manager and the real Kueue with its
// webhooks (the binaries the other suites build and cache), applies each
// its own render, gives the manager's Kueue the workers' kubeconfigs as
// Secrets, and waits until MultiKueue reports both workers connected.
// Nothing runs pods on Nodes: Kueue admits by quota, the workers' job
// controllers make the pods (left Pending, or marked done by a check), and
// that is what MultiKueue copies back.
package multikueue

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/checkreport"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// The agreement every cluster renders its part of, relative to the
// repository root, and its parts: the manager's name first, then the
// workers by name, as `tenancy render --cluster` names them.
const (
	agreement   = "examples/fleet/tenancy.toml"
	managerPart = "hub"
)

var workerParts = []string{"east", "west"}

// workerLostTimeout is the manager Kueue's multiKueue.workerLostTimeout:
// how long a Workload stays admitted on the manager after its worker is
// lost, before it goes back to the queue. Kueue's default is 15 minutes;
// short here so the lost-worker check takes seconds.
const workerLostTimeout = 10 * time.Second

// envKueueTools names another Kueue (a tools module under test/e2e/tools)
// to run instead of the default one, as the control-plane suite's runs do;
// binaries.EnvTenancy a prebuilt tenancy binary.
const envKueueTools = "TENANCY_E2E_KUEUE_TOOLS"

// fleet is the running fleet, shared by every check. Checks run one after
// the other and each starts from no Jobs and no Workloads anywhere
// (clearFleet); the lost-worker check stops a worker and so runs last.
var fleet struct {
	manager  *cluster
	workers  []*cluster
	tenancy  string
	repoRoot string
	startErr error
	kueue    string // its version
	// startup is how long the three control planes took to start side by
	// side, and ready how long until MultiKueue had connected the workers.
	startup, ready time.Duration
}

var keep = flag.Bool("keep", false, "keep the temporary directory (state and logs) after the run")

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(checkreport.Main(m, checkreport.Suite{
		Name: "e2e-multikueue",
		Keep: *keep,
		SetUp: func(ctx context.Context, dir string) (func(), error) {
			fleet.startErr = setUp(ctx, dir)
			return stopAll, fleet.startErr
		},
		Report: printReport,
	}))
}

// all lists the manager then the workers, those started.
func all() []*cluster {
	var out []*cluster
	if fleet.manager != nil {
		out = append(out, fleet.manager)
	}
	for _, w := range fleet.workers {
		if w != nil {
			out = append(out, w)
		}
	}
	return out
}

func stopAll() {
	var wg sync.WaitGroup
	for _, c := range all() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.stop()
		}()
	}
	wg.Wait()
}

// setUp builds or reuses the binaries and tenancy, starts the three control
// planes side by side, and connects them.
func setUp(ctx context.Context, dir string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	fleet.repoRoot = filepath.Clean(filepath.Join(wd, "..", "..", ".."))
	cache, err := binaries.DefaultCacheDir()
	if err != nil {
		return err
	}
	t0 := time.Now()
	bins, err := binaries.Ensure(ctx, filepath.Join(wd, "..", "tools"), cache, os.Stderr)
	if err != nil {
		return fmt.Errorf("control-plane binaries: %w", err)
	}
	if tools := os.Getenv(envKueueTools); tools != "" {
		k, err := binaries.EnsureComponent(ctx, filepath.Join(wd, "..", "tools"), cache, binaries.KueueIn(tools), os.Stderr)
		if err != nil {
			return err
		}
		bins.Paths["kueue"], bins.KueueDir, bins.Versions["kueue"] = k.Path, k.ModuleDir, k.Version
	}
	fleet.kueue = bins.Versions["kueue"]
	fmt.Fprintf(os.Stderr, "e2e-multikueue: binaries ready in %s (kueue %s)\n", time.Since(t0).Round(time.Millisecond), bins.Versions["kueue"])

	if fleet.tenancy, err = binaries.Tenancy(ctx, fleet.repoRoot, dir); err != nil {
		return err
	}

	// Every part is rendered before anything starts: a render that fails
	// fails the set-up at once.
	parts := append([]string{managerPart}, workerParts...)
	renders := make(map[string][]*unstructuredObj, len(parts))
	for _, p := range parts {
		objs, err := renderPart(p)
		if err != nil {
			return err
		}
		renders[p] = objs
	}

	// The three control planes start side by side: most of a start is
	// waiting (etcd, the API server's readiness, Kueue's certificates).
	t1 := time.Now()
	clusters := make([]*cluster, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clusters[i], errs[i] = startCluster(ctx, p, filepath.Join(dir, p), bins, renders[p])
		}()
	}
	wg.Wait()
	fleet.manager, fleet.workers = clusters[0], clusters[1:]
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	fleet.startup = time.Since(t1)
	fmt.Fprintf(os.Stderr, "e2e-multikueue: three control planes ready in %s\n", fleet.startup.Round(time.Millisecond))

	if err := connect(ctx); err != nil {
		return err
	}
	fleet.ready = time.Since(t1)
	fmt.Fprintf(os.Stderr, "e2e-multikueue: workers connected, fleet ready %s after the start\n", fleet.ready.Round(time.Millisecond))
	return nil
}

// renderPart runs `tenancy render --cluster part` on the fleet agreement.
func renderPart(part string) ([]*unstructuredObj, error) {
	cmd := exec.Command(fleet.tenancy, "render", "--cluster", part, agreement)
	cmd.Dir = fleet.repoRoot
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("tenancy render --cluster %s %s: %w\n%s", part, agreement, err, stderr.String())
	}
	objs, err := controlplane.ParseManifests(out)
	if err != nil {
		return nil, fmt.Errorf("parse the render of %s: %w", part, err)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("tenancy render --cluster %s produced no objects", part)
	}
	return objs, nil
}

var report checkreport.Report

// begin starts a check: its outcome goes to the report and, when it fails,
// the end of the manager's component logs (the workers' are in the kept
// directory).
func begin(t *testing.T) {
	t.Helper()
	var cp *controlplane.ControlPlane
	if fleet.manager != nil {
		cp = fleet.manager.cp
	}
	report.Begin(t, cp, fleet.startErr, 2000)
	if t.Failed() {
		return
	}
	clearFleet(t)
}

func printReport(total time.Duration) {
	records, counts := report.Records()
	fmt.Println()
	fmt.Printf("tenancy e2e MultiKueue fleet report (Kueue %s)\n", fleet.kueue)
	if fleet.startup > 0 {
		fmt.Printf("  three control planes started side by side: %s; workers connected after %s\n",
			fleet.startup.Round(time.Millisecond), fleet.ready.Round(time.Millisecond))
	}
	for _, r := range records {
		fmt.Printf("  %-4s  %-48s %8s\n", r.Result, r.Name, r.Duration.Round(10*time.Millisecond))
	}
	sum := 0
	var parts []string
	for _, c := range all() {
		n := 0
		for _, mib := range c.cp.MemoryMiB() {
			n += mib
		}
		sum += n
		parts = append(parts, fmt.Sprintf("%s %d", c.name, n))
	}
	if sum > 0 {
		sort.Strings(parts)
		fmt.Printf("  memory at the end: %d MiB (%s)\n", sum, strings.Join(parts, ", "))
	}
	fmt.Printf("  whole run including start-up: %s\n", total.Round(time.Second))
	fmt.Printf("e2e-multikueue: %d passed, %d failed, %d skipped\n", counts["PASS"], counts["FAIL"], counts["SKIP"])
}
