// Package kaipools proves, in the real KAI Scheduler v0.17.0 with one
// scheduler per SchedulingShard, that what `tenancy render --backend kai`
// makes of an agreement with quotas on two GPU flavors (a node pool per
// flavor: a SchedulingShard and a Queue tree each) holds per pool: each
// team's guarantee, borrowing, never-lent GPUs and reclaim, with KWOK
// standing in for the H100 and A100 Nodes, each labelled with its pool.
//
// It is a suite of its own beside test/e2e/kai, with a KAI control plane of
// its own (the default shard's scheduler and one per pool), so that its
// checks run beside the KAI suite under make e2e's -p 3 instead of adding
// to it, the longest suite; within it the two pools' independent checks run
// at once (TestKAIPoolH100 and TestKAIPoolA100).
//
// KAI's podgroup controller does not run here: v0.17.0's binds :8080
// whatever it is told, and the KAI suite's holds that port under make e2e.
// It writes only PodGroup and Queue status, which the scheduler does not
// read, so the checks count bound pods instead.
package kaipools

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/checkreport"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/kaiwork"
)

var (
	env      *kaiwork.Started
	startErr error
	// skip, when set, is why the suite did not run (no KAI source).
	skip   string
	report checkreport.Report
)

var keep = flag.Bool("keep", false, "keep the temporary directory (state and logs) after the run")

// poolValues are the pools of testdata/kai-pools.toml, as the render's
// SchedulingShards name them: the harness runs a scheduler for each.
var poolValues = []string{"h100", "a100"}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(checkreport.Main(m, checkreport.Suite{
		Name: "e2e-kai-pools",
		Keep: *keep,
		SetUp: func(ctx context.Context, dir string) (func(), error) {
			startErr = setUp(ctx, dir)
			if env == nil || env.CP == nil {
				return nil, startErr
			}
			return env.CP.Stop, startErr
		},
		Report: func(total time.Duration) {
			s := started()
			kaiwork.PrintReport(os.Stdout, "e2e-kai-pools", "tenancy e2e KAI node-pool report", skip, s.CP, s.KAI, &report, total)
		},
	}))
}

func setUp(ctx context.Context, dir string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	env, err = kaiwork.Start(ctx, kaiwork.Setup{Name: "e2e-kai-pools", RepoRoot: filepath.Clean(filepath.Join(wd, "..", "..", "..")),
		Dir: dir, Namespaces: namespaces, Log: os.Stderr,
		Options: func(o *controlplane.KAIOptions) {
			o.Shards = poolValues
			o.WithoutPodGroupController = true
		}})
	if env.Skip != "" {
		skip = "KAI SUITE DID NOT RUN: " + env.Skip
		fmt.Fprintln(os.Stderr, "e2e-kai-pools: "+skip)
	}
	return err
}

// begin starts a check; without KAI's source it skips with the reason, so
// the summary shows the suite did not run.
func begin(t *testing.T) {
	t.Helper()
	report.SkipIf(t, skip)
	report.Begin(t, started().CP, startErr, 3000)
}

// started is what set-up started, empty when it could not begin.
func started() *kaiwork.Started {
	if env == nil {
		return &kaiwork.Started{}
	}
	return env
}
