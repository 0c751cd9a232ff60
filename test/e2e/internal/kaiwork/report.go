package kaiwork

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/checkreport"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// PodGroupGVR is KAI's PodGroup.
var PodGroupGVR = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2alpha2", Resource: "podgroups"}

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

// Normalized round-trips v through JSON, so that numbers parsed from YAML
// and read from the server compare by value.
func Normalized(t testing.TB, v any) any {
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

// PrintReport writes a KAI suite's closing report under title: why it did
// not run (skip), the control plane's start-up and KAI's build time, each
// check's outcome and time, the components' memory at the end, and the
// counts, prefixed with the suite's name.
func PrintReport(w io.Writer, name, title, skip string, cp *controlplane.ControlPlane, kai *binaries.KAISet, report *checkreport.Report, total time.Duration) {
	records, counts := report.Records()
	fmt.Fprintln(w)
	fmt.Fprintln(w, title)
	if skip != "" {
		fmt.Fprintf(w, "  %s\n", skip)
	}
	if cp != nil {
		fmt.Fprintf(w, "  KAI control plane start-up: %s\n", cp.StartupTime.Round(time.Millisecond))
	}
	if kai != nil && kai.Built {
		fmt.Fprintf(w, "  KAI Scheduler built from source in %s\n", kai.BuildTime.Round(time.Second))
	}
	for _, r := range records {
		fmt.Fprintf(w, "  %-4s  %-52s %8s\n", r.Result, r.Name, r.Duration.Round(10*time.Millisecond))
	}
	if cp != nil {
		var parts []string
		sum := 0
		for component, mib := range cp.MemoryMiB() {
			parts = append(parts, fmt.Sprintf("%s %d", component, mib))
			sum += mib
		}
		sort.Strings(parts)
		fmt.Fprintf(w, "  memory at the end: %d MiB (%s)\n", sum, strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "  whole run including start-up: %s\n", total.Round(time.Second))
	fmt.Fprintf(w, "%s: %d passed, %d failed, %d skipped\n", name, counts["PASS"], counts["FAIL"], counts["SKIP"])
}
