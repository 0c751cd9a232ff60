// Package kai proves, in the real KAI Scheduler v0.17.0 (built from
// ../shared/src as the KAI suite builds it, internal/kaiwork), that
// `tenancy explain --contention --backend kai` says what KAI does: for the
// reference agreement, examples/departments and a three-team weighted
// agreement, the teams of each scenario (each team alone, every team busy,
// and chosen --busy sets) flood their queues with 1-GPU pods, and once
// KAI's allocation is stable the pods bound per team are explain's numbers.
// A mismatch fails the check.
//
// It has a KAI control plane of its own, so that make e2e runs it beside
// the KAI suite instead of after it. Without KAI's source every check
// skips, saying so and how to run it; the rest of make e2e runs.
package kai

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/await"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/checkreport"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/kaiwork"
)

var env struct {
	*kaiwork.Started
	startErr error
}

var keep = flag.Bool("keep", false, "keep the temporary directory (state and logs) after the run")

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(checkreport.Main(m, checkreport.Suite{
		Name: "e2e-contention-kai",
		Keep: *keep,
		SetUp: func(ctx context.Context, dir string) (func(), error) {
			wd, err := os.Getwd()
			if err != nil {
				return nil, err
			}
			env.Started, env.startErr = kaiwork.Start(ctx, kaiwork.Setup{Name: "e2e-contention-kai",
				RepoRoot: filepath.Clean(filepath.Join(wd, "..", "..", "..", "..")), Dir: dir, Log: os.Stderr,
				// It counts bound pods and reads no Queue status; the KAI
				// suite beside it keeps :8080 (controlplane.KAIOptions).
				Options: func(o *controlplane.KAIOptions) { o.WithoutPodGroupController = true }})
			if env.Skip != "" {
				env.Skip = "KAI CONTENTION PROOF DID NOT RUN: " + env.Skip
				fmt.Fprintln(os.Stderr, "e2e-contention-kai: "+env.Skip)
			}
			env.Waits = await.Waits{Timeout: 60 * time.Second, Interval: 200 * time.Millisecond, State: state}
			if env.CP == nil {
				return nil, env.startErr
			}
			return env.CP.Stop, env.startErr
		},
		Report: printReport,
	}))
}

// printReport prints every scenario's numbers (the checks' pass or fail
// is go test's), then the totals.
func printReport(total time.Duration) {
	_, n := report.Records()
	out := []string{"", "tenancy e2e: explain --contention against the real KAI"}
	if env.Skip != "" {
		out = append(out, env.Skip)
	}
	if env.CP != nil {
		out = append(out, "KAI control plane start-up: "+env.CP.StartupTime.Round(time.Millisecond).String(),
			"per scenario: the time to settle, and each busy team's GPUs as explain says / pods KAI bound")
	}
	out = append(out, outcomes.list()...)
	out = append(out, "whole run including start-up: "+total.Round(time.Second).String())
	fmt.Println(strings.Join(out, "\n  "))
	fmt.Printf("e2e-contention-kai: %d passed, %d failed, %d skipped\n", n["PASS"], n["FAIL"], n["SKIP"])
}

var report checkreport.Report

// begin starts a check; without KAI's source it skips with the reason, so
// the summary shows the proof did not run.
func begin(t *testing.T) {
	t.Helper()
	report.SkipIf(t, env.Skip)
	report.Begin(t, env.CP, env.startErr, 3000)
}
