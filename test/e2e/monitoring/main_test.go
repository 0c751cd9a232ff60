// Package monitoring checks what tenancy renders for [monitoring] and what
// tenancy report computes, with the real Prometheus tools and no control
// plane: promtool check rules and promtool test rules on the rendered
// PrometheusRule, and tenancy report against a real Prometheus server on
// loopback, over a TSDB backfilled with promtool from a generated week.
//
// What is simulated: the schedulers and dcgm-exporter. Their metrics are
// written as OpenMetrics, with the names and labels of Kueue v0.17.0's
// pkg/metrics, KAI's queue controller (kai_queue_*) and dcgm-exporter's
// Kubernetes mapping, and backfilled; everything that reads them is real.
package monitoring_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
)

// tools holds the binaries every test uses.
var tools struct {
	prometheus, promtool, tenancy string
	root                          string // the repository root
	dir                           string // scratch space
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(setUp(m))
}

func setUp(m *testing.M) int {
	began := time.Now()
	ctx := context.Background()
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "monitoring:", err)
		return 1
	}
	tools.root = filepath.Join(wd, "..", "..", "..")
	cache, err := binaries.DefaultCacheDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "monitoring:", err)
		return 1
	}
	set, err := binaries.EnsureComponents(ctx, filepath.Join(wd, "..", "tools"), cache, binaries.Monitoring, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "monitoring:", err)
		return 1
	}
	tools.prometheus, tools.promtool = set.Paths["prometheus"], set.Paths["promtool"]
	if tools.dir, err = os.MkdirTemp("", "tenancy-monitoring-"); err != nil {
		fmt.Fprintln(os.Stderr, "monitoring:", err)
		return 1
	}
	defer os.RemoveAll(tools.dir)
	tools.tenancy = filepath.Join(tools.dir, "tenancy")
	build := exec.Command("go", "build", "-o", tools.tenancy, "./cmd/tenancy")
	build.Dir = tools.root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "monitoring: build tenancy: %v\n%s", err, out)
		return 1
	}
	fmt.Printf("monitoring: prometheus and promtool %s, set up in %s\n", set.Versions["prometheus"], time.Since(began).Round(time.Millisecond))
	code := m.Run()
	fmt.Printf("monitoring: done in %s\n", time.Since(began).Round(time.Millisecond))
	return code
}
