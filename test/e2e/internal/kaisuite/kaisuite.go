// Package kaisuite sets up what a KAI suite runs on: KAI Scheduler v0.17.0
// built from its release source, the tenancy binary, a KAI control plane of
// the suite's own, and what KAI's chart installs besides the components.
// The KAI suite (test/e2e/kai) and the node-pool suite (test/e2e/kaipools)
// start the same way and differ in the control plane's options (node pools)
// and in their checks.
package kaisuite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/checkreport"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// Env is one suite's KAI control plane and the tenancy binary to render with.
type Env struct {
	CP       *controlplane.ControlPlane
	Tenancy  string
	RepoRoot string
	KAI      *binaries.KAISet
	// Skip, when set, is why the suite did not run (no KAI source).
	Skip string
}

// SetUp builds (or finds cached) the control plane's and KAI's binaries and
// tenancy, starts the KAI control plane with opts (SetUp fills in the
// binaries, directories and log) and installs the chart's defaults with the
// namespaces the checks work in. The working directory is the suite's
// package directory, two levels below test/e2e. Without KAI's source it
// returns an Env whose Skip says why and how to run it.
func SetUp(ctx context.Context, dir, suite string, opts controlplane.KAIOptions, namespaces []string) (*Env, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	e := &Env{RepoRoot: filepath.Clean(filepath.Join(wd, "..", "..", ".."))}
	src, err := binaries.KAISource(e.RepoRoot)
	if err != nil {
		e.Skip = "KAI SUITE DID NOT RUN: " + err.Error() +
			"; run it with: TENANCY_KAI_SRC=/path/to/kai-scheduler-v0.17.0.tar.gz make e2e"
		fmt.Fprintln(os.Stderr, suite+": "+e.Skip)
		return e, nil
	}
	cache, err := binaries.DefaultCacheDir()
	if err != nil {
		return e, err
	}
	t0 := time.Now()
	cpBins, err := binaries.EnsureKAIControlPlane(ctx, filepath.Join(e.RepoRoot, "test", "e2e", "tools"), cache, os.Stderr)
	if err != nil {
		return e, fmt.Errorf("control-plane binaries: %w", err)
	}
	kai, err := binaries.EnsureKAI(ctx, src, cache, os.Stderr)
	if err != nil {
		return e, err
	}
	e.KAI = kai
	for name, p := range kai.Paths {
		cpBins.Paths[name] = p
	}
	fmt.Fprintf(os.Stderr, "%s: binaries ready in %s (KAI from %s, key %s, built now: %v)\n",
		suite, time.Since(t0).Round(time.Millisecond), src, kai.Key, kai.Built)

	e.Tenancy = filepath.Join(dir, "tenancy")
	build := exec.CommandContext(ctx, "go", "build", "-o", e.Tenancy, "./cmd/tenancy")
	build.Dir = e.RepoRoot
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return e, fmt.Errorf("build tenancy: %w\n%s", err, out)
	}
	opts.Binaries, opts.KAICRDDir, opts.KwokDir = cpBins.Paths, kai.CRDDir(), cpBins.KwokDir
	opts.Dir, opts.Log = dir, os.Stderr
	cp, err := controlplane.StartKAI(ctx, opts)
	if err != nil {
		return e, fmt.Errorf("start KAI control plane: %w", err)
	}
	e.CP = cp
	return e, installChartDefaults(ctx, cp, namespaces)
}

// Render runs `tenancy render --backend kai` on an agreement (a path
// relative to the repository root).
func (e *Env) Render(file string, extra ...string) (stdout []byte, stderr string, err error) {
	cmd := exec.Command(e.Tenancy, append([]string{"render", "--backend", "kai", file}, extra...)...)
	cmd.Dir = e.RepoRoot
	var o, s bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &s
	err = cmd.Run()
	return o.Bytes(), s.String(), err
}

// RenderObjects is Render, parsed; it fails the check when the render
// fails, with what tenancy said.
func (e *Env) RenderObjects(t *testing.T, file string, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	out, stderr, err := e.Render(file, extra...)
	if err != nil {
		t.Fatalf("tenancy render --backend kai %s: %v\n%s", file, err, stderr)
	}
	objs, err := controlplane.ParseManifests(out)
	if err != nil {
		t.Fatalf("parse render of %s: %v", file, err)
	}
	return objs
}

// installChartDefaults creates what KAI's chart installs besides the
// components (deployments/kai-scheduler/templates): its PriorityClasses
// and the default queues, the latter with the GPU limit 0 tenancy's README
// asks for (defaultQueue.*.gpu.limit=0), so namespaces outside the
// agreement get no GPUs through default-queue; and the namespaces.
func installChartDefaults(ctx context.Context, cp *controlplane.ControlPlane, namespaces []string) error {
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

// QueueGVR and PodGroupGVR are KAI's Queue and PodGroup resources.
var (
	QueueGVR    = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2", Resource: "queues"}
	PodGroupGVR = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2alpha2", Resource: "podgroups"}
)

// QueueAllocatedGPUs reads a Queue's status.allocated GPUs.
func QueueAllocatedGPUs(ctx context.Context, dyn dynamic.Interface, name string) (float64, error) {
	q, err := dyn.Resource(QueueGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	v, found, _ := unstructured.NestedFieldNoCopy(q.Object, "status", "allocated", "nvidia.com/gpu")
	if !found {
		return 0, nil
	}
	qty, err := resource.ParseQuantity(fmt.Sprint(v))
	if err != nil {
		return 0, err
	}
	return qty.AsApproximateFloat64(), nil
}

// PodGroupOf returns the PodGroup KAI's podgrouper made for a pod.
func PodGroupOf(ctx context.Context, cp *controlplane.ControlPlane, ns, pod string) (*unstructured.Unstructured, error) {
	p, err := cp.Kube.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	name := p.Annotations["pod-group-name"]
	if name == "" {
		return nil, fmt.Errorf("pod %s/%s has no pod-group-name annotation yet", ns, pod)
	}
	return cp.Dynamic.Resource(PodGroupGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

// GPUNode is a simulated Node KWOK manages, with count of res and room for
// many pods.
func GPUNode(name string, res corev1.ResourceName, count int64, labels map[string]string) *corev1.Node {
	all := map[string]string{"kubernetes.io/hostname": name, "tenancy.dev/simulated": "true"}
	for k, v := range labels {
		all[k] = v
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
		res:                   *resource.NewQuantity(count, resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all,
			Annotations: map[string]string{controlplane.KwokNodeAnnotation: controlplane.KwokNodeValue}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// Begin starts a check: without KAI's source it skips with the reason (and
// records the skip, so the summary shows the suite did not run); otherwise
// the check's outcome and time go into r, with the components' logs if it
// fails, and a set-up error fails it at once.
func Begin(t *testing.T, e *Env, setupErr error, r *checkreport.Report) {
	t.Helper()
	if e != nil && e.Skip != "" {
		r.Add(t.Name(), "SKIP", 0)
		t.Skip(e.Skip)
	}
	var cp *controlplane.ControlPlane
	if e != nil {
		cp = e.CP
	}
	r.Begin(t, cp, setupErr, 3000)
}

// Normalized round-trips v through JSON, so that numbers parsed from YAML
// and read from the server compare by value.
func Normalized(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// QueuesState lists every Queue's allocated resources, for a failure
// message's summary of the cluster.
func QueuesState(ctx context.Context, dyn dynamic.Interface) string {
	list, err := dyn.Resource(QueueGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "\n  queues: " + err.Error()
	}
	var b strings.Builder
	for _, q := range list.Items {
		alloc, _, _ := unstructured.NestedFieldNoCopy(q.Object, "status", "allocated")
		fmt.Fprintf(&b, "\n  queue %s allocated %v", q.GetName(), alloc)
	}
	return b.String()
}

// PrintReport writes a suite's closing report: each check's outcome and
// time, the start-up and build times, the components' memory at the end.
func PrintReport(w io.Writer, suite, title string, e *Env, report *checkreport.Report, total time.Duration) {
	records, counts := report.Records()
	fmt.Fprintln(w)
	fmt.Fprintln(w, title)
	if e != nil && e.Skip != "" {
		fmt.Fprintf(w, "  %s\n", e.Skip)
	}
	if e != nil && e.CP != nil {
		fmt.Fprintf(w, "  KAI control plane start-up: %s\n", e.CP.StartupTime.Round(time.Millisecond))
	}
	if e != nil && e.KAI != nil && e.KAI.Built {
		fmt.Fprintf(w, "  KAI Scheduler built from source in %s\n", e.KAI.BuildTime.Round(time.Second))
	}
	for _, r := range records {
		fmt.Fprintf(w, "  %-4s  %-52s %8s\n", r.Result, r.Name, r.Duration.Round(10*time.Millisecond))
	}
	if e != nil && e.CP != nil {
		var parts []string
		sum := 0
		for name, mib := range e.CP.MemoryMiB() {
			parts = append(parts, fmt.Sprintf("%s %d", name, mib))
			sum += mib
		}
		sort.Strings(parts)
		fmt.Fprintf(w, "  memory at the end: %d MiB (%s)\n", sum, strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "  whole run including start-up: %s\n", total.Round(time.Second))
	fmt.Fprintf(w, "%s: %d passed, %d failed, %d skipped\n", suite, counts["PASS"], counts["FAIL"], counts["SKIP"])
}
