package kaiwork

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// Setup says how Start brings a suite's cluster up.
type Setup struct {
	// Name prefixes the progress lines ("e2e-kai").
	Name string
	// RepoRoot is the clone's root; KAI's source is looked for beside it.
	RepoRoot string
	// Dir is the suite's temporary directory: the tenancy binary, state
	// and logs go there.
	Dir string
	// Namespaces are created for the suite's work (the agreements' own
	// namespaces come with their render).
	Namespaces []string
	// Options, when set, changes the control plane's options before it
	// starts.
	Options func(*controlplane.KAIOptions)
	Log     io.Writer
}

// Started is what Start brought up. Skip, when set, is why nothing was:
// no KAI source, and how to provide one; the suite's checks then skip.
type Started struct {
	Cluster
	KAI  *binaries.KAISet
	Skip string
}

// Start builds KAI from its release source ($TENANCY_KAI_SRC, else
// ../shared/src beside the clone; KAI's Go module is not served by the
// module proxy), the control plane's programs and tenancy, starts the
// KAI control plane (controlplane.StartKAI) and installs the chart's
// defaults (InstallChartDefaults). Without a KAI source it returns Skip
// and no error. On an error after the control plane started, Started.CP is
// set so that the suite can stop it.
func Start(ctx context.Context, s Setup) (*Started, error) {
	out := &Started{Cluster: Cluster{RepoRoot: s.RepoRoot, Namespaces: s.Namespaces}}
	src, err := binaries.KAISource(s.RepoRoot)
	if err != nil {
		out.Skip = err.Error() + "; run it with: TENANCY_KAI_SRC=/path/to/kai-scheduler-v0.17.0.tar.gz make e2e"
		return out, nil
	}
	cache, err := binaries.DefaultCacheDir()
	if err != nil {
		return out, err
	}
	t0 := time.Now()
	cpBins, err := binaries.EnsureKAIControlPlane(ctx, filepath.Join(s.RepoRoot, "test", "e2e", "tools"), cache, s.Log)
	if err != nil {
		return out, fmt.Errorf("control-plane binaries: %w", err)
	}
	kai, err := binaries.EnsureKAI(ctx, src, cache, s.Log)
	if err != nil {
		return out, err
	}
	out.KAI = kai
	for name, p := range kai.Paths {
		cpBins.Paths[name] = p
	}
	fmt.Fprintf(s.Log, "%s: binaries ready in %s (KAI from %s, key %s, built now: %v)\n",
		s.Name, time.Since(t0).Round(time.Millisecond), src, kai.Key, kai.Built)

	if out.Tenancy, err = binaries.Tenancy(ctx, s.RepoRoot, s.Dir); err != nil {
		return out, err
	}
	opts := controlplane.KAIOptions{
		Binaries:  cpBins.Paths,
		KAICRDDir: kai.CRDDir(),
		KwokDir:   cpBins.KwokDir,
		Dir:       s.Dir,
		Log:       s.Log,
	}
	if s.Options != nil {
		s.Options(&opts)
	}
	cp, err := controlplane.StartKAI(ctx, opts)
	if err != nil {
		return out, fmt.Errorf("start KAI control plane: %w", err)
	}
	out.CP = cp
	return out, InstallChartDefaults(ctx, cp, s.Namespaces)
}

// InstallChartDefaults creates what KAI's chart installs besides the
// components (deployments/kai-scheduler/templates): its PriorityClasses
// and the default queues, the latter with the GPU limit 0 tenancy's README
// asks for (defaultQueue.*.gpu.limit=0), so namespaces outside the
// agreement get no GPUs through default-queue; and the namespaces given.
func InstallChartDefaults(ctx context.Context, cp *controlplane.ControlPlane, namespaces []string) error {
	for name, v := range map[string]int32{"train": 50, "build-preemptible": 75, "build": 100, "inference": 125} {
		_, err := cp.Kube.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	for _, q := range []*unstructured.Unstructured{DefaultQueue("default-parent-queue", "", 0), DefaultQueue("default-queue", "default-parent-queue", 0)} {
		if _, err := cp.Applier.Apply(ctx, []*unstructured.Unstructured{q}, false); err != nil {
			return err
		}
	}
	for _, ns := range namespaces {
		_, err := cp.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// DefaultQueue is the chart's default queue with a GPU limit (-1: the
// chart's default, unlimited).
func DefaultQueue(name, parent string, gpuLimit int64) *unstructured.Unstructured {
	res := func(limit int64) map[string]any {
		return map[string]any{"quota": int64(0), "limit": limit, "overQuotaWeight": int64(1)}
	}
	spec := map[string]any{"resources": map[string]any{"cpu": res(-1), "memory": res(-1), "gpu": res(gpuLimit)}}
	if parent != "" {
		spec["parentQueue"] = parent
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}
