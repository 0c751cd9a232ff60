// Command e2e-binaries builds, one after the other, every third-party binary
// the end-to-end packages use (or finds it cached), before make e2e starts
// them.
//
// make e2e runs its test packages two at a time (go test -p 2). With a warm
// cache that only starts processes; with a cold one each package would build
// its binaries itself, and two cold builds competing for 2 cores took more
// than three times as long each (kube-apiserver 7 min 56 s against 2 min 7 s
// alone), which put the cold CI run over its budget. Built here first, in
// sequence, each build has the whole machine, and the packages find them
// cached.
//
// Usage (from test/e2e):
//
//	go run ./cmd/e2e-binaries            the control plane, the Kueue matrix, monitoring and KAI
//	go run ./cmd/e2e-binaries -argocd    also Argo CD v3 and v2 (make e2e-argocd)
//
// It uses the same cache (binaries.DefaultCacheDir) and the same stamps as
// the suites. Without a KAI source it says so and builds the rest: the KAI
// suite then reports itself as not run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
)

func main() {
	argocd := flag.Bool("argocd", false, "build Argo CD v3 and v2 too")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *argocd); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-binaries:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, argocd bool) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	tools := filepath.Join(wd, "tools")
	if _, err := os.Stat(tools); err != nil {
		return fmt.Errorf("run from test/e2e: %w", err)
	}
	cache, err := binaries.DefaultCacheDir()
	if err != nil {
		return err
	}
	t0 := time.Now()
	step := func(what string, f func() error) error {
		t := time.Now()
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		fmt.Fprintf(os.Stderr, "e2e-binaries: %s ready in %s\n", what, time.Since(t).Round(time.Second))
		return nil
	}

	if err := step("control plane", func() error {
		_, err := binaries.Ensure(ctx, tools, cache, os.Stderr)
		return err
	}); err != nil {
		return err
	}
	// Every other Kueue tools module is a version of the matrix
	// (versions_test.go names them); building each one found here keeps a
	// new entry from being built under -p 2.
	matrix, err := filepath.Glob(filepath.Join(tools, "kueue-*"))
	if err != nil {
		return err
	}
	sort.Strings(matrix)
	for _, dir := range matrix {
		name := filepath.Base(dir)
		if err := step("Kueue of tools/"+name, func() error {
			_, err := binaries.EnsureComponent(ctx, tools, cache, binaries.KueueIn(name), os.Stderr)
			return err
		}); err != nil {
			return err
		}
	}
	if err := step("monitoring", func() error {
		_, err := binaries.EnsureComponents(ctx, tools, cache, binaries.Monitoring, os.Stderr)
		return err
	}); err != nil {
		return err
	}
	src, err := binaries.KAISource(filepath.Join(wd, "..", ".."))
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e-binaries: KAI NOT BUILT: %v\n", err)
	} else if err := step("KAI", func() error {
		_, err := binaries.EnsureKAI(ctx, src, cache, os.Stderr)
		return err
	}); err != nil {
		return err
	}
	if argocd {
		for _, c := range []binaries.Component{binaries.ArgoCD, binaries.ArgoCDV2} {
			if err := step(c.ToolsDir, func() error {
				_, err := binaries.EnsureComponent(ctx, tools, cache, c, os.Stderr)
				return err
			}); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(os.Stderr, "e2e-binaries: all ready in %s (%s)\n", time.Since(t0).Round(time.Second), cache)
	return nil
}
