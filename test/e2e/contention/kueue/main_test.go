// Package kueue proves that `tenancy explain --contention` says what the
// real Kueue does: for the reference agreement, examples/departments and a
// three-team agreement of its own (testdata/contention-three.toml), in
// every scenario explain computes (each team alone, every team busy, and
// busy sets), the busy teams flood their queues with 1-GPU Jobs, and once
// Kueue's admissions are stable the admitted count of each team and flavor
// must equal explain's number, or lie within explain's range where Kueue
// serves borrowers first come. A mismatch fails the check.
//
// TestMain starts a control plane of its own (etcd, kube-apiserver,
// kube-controller-manager and Kueue 0.17.0 with its webhooks, the binaries
// the other suites build and cache), so the package runs beside the long
// suites under make e2e's -p 3. No Nodes: Kueue admits by quota.
package kueue

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/checkreport"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// env is the running control plane and the tenancy binary. Checks run one
// after the other: each applies its agreement (useAgreement) and clears
// its Jobs between scenarios.
var env struct {
	cp       *controlplane.ControlPlane
	tenancy  string
	repoRoot string
	kueue    string // its version
	startErr error
}

var keep = flag.Bool("keep", false, "keep the temporary directory (state and logs) after the run")

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(checkreport.Main(m, checkreport.Suite{
		Name: "e2e-contention-kueue",
		Keep: *keep,
		SetUp: func(ctx context.Context, dir string) (func(), error) {
			env.startErr = setUp(ctx, dir)
			if env.cp == nil {
				return nil, env.startErr
			}
			return env.cp.Stop, env.startErr
		},
		Report: printReport,
	}))
}

func setUp(ctx context.Context, dir string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	env.repoRoot = filepath.Clean(filepath.Join(wd, "..", "..", "..", ".."))
	cache, err := binaries.DefaultCacheDir()
	if err != nil {
		return err
	}
	bins, err := binaries.Ensure(ctx, filepath.Join(wd, "..", "..", "tools"), cache, os.Stderr)
	if err != nil {
		return fmt.Errorf("control-plane binaries: %w", err)
	}
	env.kueue = bins.Versions["kueue"]
	if env.tenancy, err = binaries.Tenancy(ctx, env.repoRoot, dir); err != nil {
		return err
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Binaries: bins.Paths,
		KueueDir: bins.KueueDir,
		Dir:      dir,
		Log:      os.Stderr,
	})
	if err != nil {
		return fmt.Errorf("start control plane: %w", err)
	}
	env.cp = cp
	return nil
}

var report checkreport.Report

// begin starts a check (checkreport.Report.Begin).
func begin(t *testing.T) {
	t.Helper()
	report.Begin(t, env.cp, env.startErr, 2000)
}

func printReport(total time.Duration) {
	records, counts := report.Records()
	fmt.Println()
	fmt.Printf("tenancy e2e contention report (Kueue %s)\n", env.kueue)
	if env.cp != nil {
		fmt.Printf("  control plane start-up: %s\n", env.cp.StartupTime.Round(time.Millisecond))
	}
	for _, r := range records {
		fmt.Printf("  %-4s  %-56s %8s\n", r.Result, r.Name, r.Duration.Round(10*time.Millisecond))
	}
	fmt.Printf("  whole run including start-up: %s\n", total.Round(time.Second))
	fmt.Printf("e2e-contention-kueue: %d passed, %d failed, %d skipped\n", counts["PASS"], counts["FAIL"], counts["SKIP"])
}
