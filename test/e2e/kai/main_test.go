// Package kai proves, in the real KAI Scheduler v0.17.0 (scheduler, binder,
// podgrouper, queue and podgroup controllers) against a real
// kube-apiserver, with KWOK standing in for the GPU Nodes' kubelets, that
// what `tenancy render --backend kai` produces behaves as the teams agreed.
//
// KAI's Go module is not served by the module proxy, so TestMain builds KAI
// from its release source: $TENANCY_KAI_SRC (a source tree or tarball), else
// ../shared/src/kai-scheduler-v0.17.0.tar.gz beside the clone, cached under
// the e2e cache keyed by the source's SHA-256. Where neither exists every
// check skips, saying so and how to run it; the rest of make e2e runs.
//
// The suite has a control plane of its own (no Kueue, no kube-scheduler),
// so nothing of the Kueue suite interferes with it.
package kai

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
	"github.com/tenancy-dev/tenancy/test/e2e/internal/kaiwork"
)

var env struct {
	cp       *controlplane.ControlPlane
	tenancy  string
	repoRoot string
	startErr error
	// skip, when set, is why the suite did not run (no KAI source).
	skip string
	kai  *binaries.KAISet
}

var keep = flag.Bool("keep", false, "keep the temporary directory (state and logs) after the run")

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(checkreport.Main(m, checkreport.Suite{
		Name: "e2e-kai",
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
	started, err := kaiwork.Start(ctx, kaiwork.Setup{Name: "e2e-kai", RepoRoot: filepath.Clean(filepath.Join(wd, "..", "..", "..")),
		Dir: dir, Namespaces: workNamespaces, Log: os.Stderr,
		Options: func(o *controlplane.KAIOptions) {
			// As KAI's chart installs it (admission.enabled) with
			// global.gpuSharing: the shared-GPU checks bind fractions.
			o.Admission, o.GPUSharing = true, true
		}})
	env.cp, env.tenancy, env.repoRoot, env.kai = started.CP, started.Tenancy, started.RepoRoot, started.KAI
	if started.Skip != "" {
		env.skip = "KAI SUITE DID NOT RUN: " + started.Skip
		fmt.Fprintln(os.Stderr, "e2e-kai: "+env.skip)
	}
	return err
}

var report checkreport.Report

// begin starts a check; without KAI's source it skips with the reason, so
// the summary shows the suite did not run.
func begin(t *testing.T) {
	t.Helper()
	report.SkipIf(t, env.skip)
	report.Begin(t, env.cp, env.startErr, 3000)
}

func printReport(total time.Duration) {
	kaiwork.PrintReport(os.Stdout, "e2e-kai", "tenancy e2e KAI report", env.skip, env.cp, env.kai, &report, total)
}
