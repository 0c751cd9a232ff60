// Package e2e proves, in a real kube-apiserver with the real Kueue
// controller and webhooks, that what `tenancy render` produces behaves as
// the teams agreed: guarantees hold, idle GPUs are borrowed within limits,
// owners reclaim them, priorities preempt within a team, and a change of
// the agreement changes the quotas live.
//
// TestMain builds (or reuses from the cache) etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, KWOK and Kueue, starts them on
// 127.0.0.1 in a temporary directory, runs the checks one after another
// against that one control plane, prints a report, and stops everything.
// Meanwhile the core checks run against the other Kueue versions of the
// matrix (versions_test.go), each in a child run of this test binary with a
// control plane of its own.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/checkreport"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// env is the running control plane and the tenancy binary, shared by every
// check. Checks run sequentially: each sets the agreement it needs with
// useAgreement and starts from no Jobs.
var env struct {
	cp       *controlplane.ControlPlane
	tenancy  string // path of the built tenancy binary
	repoRoot string
	startErr error
}

var keep = flag.Bool("keep", false, "keep the temporary directory (state and logs) after the run")

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(checkreport.Main(m, checkreport.Suite{
		Name: "e2e",
		Keep: *keep,
		SetUp: func(ctx context.Context, dir string) (func(), error) {
			env.startErr = setUp(ctx, dir)
			if env.cp == nil {
				return nil, env.startErr
			}
			return env.cp.Stop, env.startErr
		},
		Report: func(total time.Duration) {
			var mem map[string]int
			if env.cp != nil {
				mem = env.cp.MemoryMiB()
			}
			printReport(total, mem)
		},
	}))
}

// setUp builds or reuses the binaries, builds tenancy, and starts the
// control plane.
func setUp(ctx context.Context, dir string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	env.repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	cache, err := binaries.DefaultCacheDir()
	if err != nil {
		return err
	}

	t0 := time.Now()
	bins, err := binaries.Ensure(ctx, filepath.Join(wd, "tools"), cache, os.Stderr)
	if err != nil {
		return fmt.Errorf("control-plane binaries: %w", err)
	}

	// A run for one Kueue of the version matrix (a child of the main run)
	// swaps in that Kueue; the main run builds the matrix's Kueues first,
	// so its children find them cached.
	matrixRun := os.Getenv(envKueueTools) != ""
	if matrixRun {
		k, err := binaries.EnsureComponent(ctx, filepath.Join(wd, "tools"), cache, binaries.KueueIn(os.Getenv(envKueueTools)), os.Stderr)
		if err != nil {
			return err
		}
		bins.Paths["kueue"], bins.KueueDir, bins.Versions["kueue"] = k.Path, k.ModuleDir, k.Version
	} else if matrixWanted() {
		if err := ensureMatrix(ctx, filepath.Join(wd, "tools"), cache); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "e2e: binaries ready in %s (%s): %s\n", time.Since(t0).Round(time.Millisecond), cache, versions(bins))

	if env.tenancy, err = binaries.Tenancy(ctx, env.repoRoot, dir); err != nil {
		return err
	}
	if !matrixRun {
		// The other Kueue versions run their core checks in child
		// processes, each with its own control plane, while this run
		// goes on: most of a check is waiting for Kueue.
		startMatrix(ctx, dir)
	}

	crds := []*unstructuredObj{virtualMachineCRD()}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Binaries:  bins.Paths,
		KueueDir:  bins.KueueDir,
		KwokDir:   bins.KwokDir,
		Nodes:     !matrixRun,
		Dir:       dir,
		ExtraCRDs: crds,
		Log:       os.Stderr,
	})
	if err != nil {
		return fmt.Errorf("start control plane: %w", err)
	}
	env.cp = cp
	return nil
}

func versions(s *binaries.Set) string {
	var parts []string
	for name, v := range s.Versions {
		parts = append(parts, name+" "+v)
	}
	sort.Strings(parts)
	if len(s.Built) > 0 {
		parts = append(parts, "built now: "+strings.Join(s.Built, ", "))
	}
	return strings.Join(parts, ", ")
}

// report holds every check's outcome for the closing report.
var report checkreport.Report

// begin starts a check (see checkreport.Report.Begin).
func begin(t *testing.T) {
	t.Helper()
	report.Begin(t, env.cp, env.startErr, 1500)
}

// recordResult adds one line to the closing report.
func recordResult(name, result string, d time.Duration) { report.Add(name, result, d) }

func printReport(total time.Duration, mem map[string]int) {
	records, counts := report.Records()
	if len(records) == 0 {
		return
	}
	fmt.Println()
	fmt.Println("tenancy e2e report")
	if env.cp != nil {
		fmt.Printf("  control plane start-up: %s\n", env.cp.StartupTime.Round(time.Millisecond))
	}
	for _, r := range records {
		fmt.Printf("  %-4s  %-48s %8s\n", r.Result, r.Name, r.Duration.Round(10*time.Millisecond))
	}
	if len(mem) > 0 {
		var parts []string
		sum := 0
		for name, mib := range mem {
			parts = append(parts, fmt.Sprintf("%s %d", name, mib))
			sum += mib
		}
		sort.Strings(parts)
		fmt.Printf("  control plane memory at the end: %d MiB (%s)\n", sum, strings.Join(parts, ", "))
	}
	fmt.Printf("  whole run including start-up: %s\n", total.Round(time.Second))
	fmt.Printf("e2e: %d passed, %d failed, %d skipped\n", counts["PASS"], counts["FAIL"], counts["SKIP"])
}
