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

const suiteName = "e2e-contention-kueue"

func TestMain(m *testing.M) {
	flag.Parse()
	suite := checkreport.Suite{Name: suiteName, Keep: *keep, Report: printReport}
	suite.SetUp = func(ctx context.Context, dir string) (func(), error) {
		env.startErr = setUp(ctx, dir)
		return stopControlPlane, env.startErr
	}
	os.Exit(checkreport.Main(m, suite))
}

// env is what the checks share. They run one after the other: each
// applies its agreement (useAgreement) and clears its Jobs between
// scenarios.
var env struct {
	// tenancy is the binary under test, repoRoot where it runs.
	tenancy, repoRoot string
	// cp is the control plane, kueue its Kueue's version, startErr why
	// it did not start.
	cp       *controlplane.ControlPlane
	kueue    string
	startErr error
}

var keep = flag.Bool("keep", false, "keep the temporary directory (state and logs) after the run")

func stopControlPlane() {
	if env.cp != nil {
		env.cp.Stop()
	}
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
	env.cp, err = controlplane.Start(ctx, controlplane.Options{Binaries: bins.Paths, KueueDir: bins.KueueDir, Dir: dir, Log: os.Stderr, NoJobPods: true})
	if err != nil {
		return fmt.Errorf("start control plane: %w", err)
	}
	return nil
}

// report holds each check's outcome; every check begins with
// report.Begin.
var report checkreport.Report

func printReport(total time.Duration) {
	var setUp []string
	if env.cp != nil {
		setUp = append(setUp, "control plane start-up: "+env.cp.StartupTime.Round(time.Millisecond).String())
	}
	report.Print(os.Stdout, suiteName, "tenancy e2e contention report (Kueue "+env.kueue+")", setUp, total)
}
