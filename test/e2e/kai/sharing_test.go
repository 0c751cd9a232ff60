package kai

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// Shared GPUs: KAI's GPU sharing with its admission webhook, binder and
// scheduler as the operator runs them with the Config's
// spec.admission.gpuSharing on (see docs/kai.md, "Shared GPUs"). A pod
// asks for part of a GPU with the annotation gpu-fraction and no
// nvidia.com/gpu resource; the binder reserves the GPU with a reservation
// pod of one whole GPU in kai-resource-reservation, whose program (stood
// in for on KWOK's Nodes) reports the GPU it got.
var sharing = testdata("kai-sharing.toml")

var notebooks = work{ns: "notebooks", queue: "notebooks", priority: "standard"}

// halfPod is a pod of w asking KAI for half a GPU: the annotation, and
// no nvidia.com/gpu resource.
func halfPod(w work, name string) *corev1.Pod {
	w.gpus = -1
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, Labels: w.podLabels(),
			Annotations: map[string]string{"gpu-fraction": "0.5"}},
		Spec: w.podSpec(),
	}
}

// sharingRule is the guardrails' refusal of a fraction on a flavor that
// does not share.
const sharingRule = "does not share its GPUs by fraction"

// waitSharingRule waits until the API server judges a half-GPU pod of w
// by the agreement just applied, shared (admitted) or not (refused by the
// sharing rule): it reads policies through an informer, so for a moment
// after an apply the previous agreement's flavors still decide.
func waitSharingRule(t *testing.T, w work, shared bool) {
	t.Helper()
	waitFor(t, fmt.Sprintf("the agreement's gpu_sharing in force (shared: %v)", shared), func(ctx context.Context) (bool, string) {
		_, err := env.cp.Kube.CoreV1().Pods(w.ns).Create(ctx, halfPod(w, "sharing-rule"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if shared {
			return err == nil, fmt.Sprint(err)
		}
		return err != nil && strings.Contains(err.Error(), sharingRule), fmt.Sprint(err)
	})
}

// halves creates n half-GPU pods of w named prefix-0 … prefix-(n-1).
func halves(t *testing.T, w work, prefix string, n int) {
	t.Helper()
	waitSharingRule(t, w, true)
	for i := range n {
		p := halfPod(w, fmt.Sprintf("%s-%d", prefix, i))
		if _, err := env.cp.Kube.CoreV1().Pods(w.ns).Create(ctxFor(t), p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create half-GPU pod %s/%s: %v", w.ns, p.Name, err)
		}
	}
}

// sharedGPU is where a fractional pod runs: its Node and the GPU group
// KAI's binder labelled it with, the reservation pod's GPU; and the name
// KAI's admission gave its GPU-sharing ConfigMaps.
type sharedGPU struct{ node, group, configMap string }

// placements returns, for the bound pods of ns named prefix*, their Node
// and GPU group, and checks what KAI's admission wrote on each.
func placements(t *testing.T, ns, prefix string) map[string]sharedGPU {
	t.Helper()
	list, err := env.cp.Kube.CoreV1().Pods(ns).List(ctxFor(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]sharedGPU{}
	for _, p := range list.Items {
		if !strings.HasPrefix(p.Name, prefix) || p.Spec.NodeName == "" {
			continue
		}
		if p.Annotations[controlplane.KAISharedGPUConfigMapAnnotation] == "" {
			t.Errorf("pod %s: KAI's admission did not name its GPU-sharing ConfigMap (%s)", p.Name, controlplane.KAISharedGPUConfigMapAnnotation)
		}
		out[p.Name] = sharedGPU{node: p.Spec.NodeName, group: p.Labels[controlplane.KAIGPUGroupLabel],
			configMap: p.Annotations[controlplane.KAISharedGPUConfigMapAnnotation]}
	}
	return out
}

// reservations lists the binder's GPU reservation pods by GPU group.
func reservations(ctx context.Context) (map[string]corev1.Pod, error) {
	list, err := env.cp.Kube.CoreV1().Pods(controlplane.KAIReservationNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]corev1.Pod{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out[p.Labels[controlplane.KAIGPUGroupLabel]] = p
		}
	}
	return out, nil
}

// checkReserved checks that each GPU group of placed (pods of ns) has exactly one
// reservation pod, on the group's Node, holding one whole GPU, with the
// GPU its program reported, that the groups' reservation pods are all
// there are, and that KAI's binder gave each pod that GPU in its
// ConfigMap (<name>-0: the first container's), which its
// NVIDIA_VISIBLE_DEVICES reads.
func checkReserved(t *testing.T, ns string, placed map[string]sharedGPU) {
	t.Helper()
	groups := map[string]string{}
	for _, g := range placed {
		groups[g.group] = g.node
	}
	var r map[string]corev1.Pod
	waitFor(t, fmt.Sprintf("one reservation pod per shared GPU (%d)", len(groups)), func(ctx context.Context) (bool, string) {
		var err error
		r, err = reservations(ctx)
		return err == nil && len(r) == len(groups), fmt.Sprintf("%d reservation pods (%v)", len(r), err)
	})
	for group, node := range groups {
		p, ok := r[group]
		switch {
		case !ok:
			t.Errorf("GPU group %q has no reservation pod in %s", group, controlplane.KAIReservationNamespace)
		case p.Spec.NodeName != node:
			t.Errorf("reservation pod %s of group %q is on %s, its pods on %s", p.Name, group, p.Spec.NodeName, node)
		case p.Annotations[controlplane.KAIReservedGPUAnnotation] == "":
			t.Errorf("reservation pod %s reports no GPU", p.Name)
		default:
			if q := p.Spec.Containers[0].Resources.Limits[gpu]; q.Value() != 1 {
				t.Errorf("reservation pod %s holds %s nvidia.com/gpu, want one whole GPU", p.Name, q.String())
			}
		}
	}
	for name, g := range placed {
		cm, err := env.cp.Kube.CoreV1().ConfigMaps(ns).Get(ctxFor(t), g.configMap+"-0", metav1.GetOptions{})
		if err != nil {
			t.Errorf("pod %s's GPU-sharing ConfigMap: %v", name, err)
			continue
		}
		if got, want := cm.Data["NVIDIA_VISIBLE_DEVICES"], r[g.group].Annotations[controlplane.KAIReservedGPUAnnotation]; got != want {
			t.Errorf("pod %s sees GPU %q, its reservation pod holds %q", name, got, want)
		}
	}
}

// boundHalves gives a check the sharing agreement, runs n half-GPU pods of
// w named half-*, waits until all are bound and returns where they are.
func boundHalves(t *testing.T, w work, n int) map[string]sharedGPU {
	t.Helper()
	reset(t, sharing)
	halves(t, w, "half", n)
	reached(t, w.ns, "half", n) // every pod: no settle can fail
	return placements(t, w.ns, "half")
}

func TestKAISharingHalvesShareOneGPU(t *testing.T) {
	begin(t)
	placed := boundHalves(t, training, 2)
	a, b := placed["half-0"], placed["half-1"]
	if a.group == "" || a.node != b.node || a.group != b.group {
		t.Fatalf("the two half-GPU pods are not on one GPU: half-0 %+v, half-1 %+v", a, b)
	}
	checkReserved(t, "training", placed)
	// KAI charges the queue each pod's fraction (0.5 + 0.5), not the
	// device: the same 1 as one whole GPU here.
	waitQueueGPUs(t, "training", 1)
	pg := waitPodGroup(t, "training", "half-0")
	if got, _, _ := unstructured.NestedString(pg.Object, "status", "resourcesStatus", "allocated", "nvidia.com/gpu"); got != "500m" {
		t.Errorf("half-0's PodGroup says %q GPUs allocated, want 500m (its fraction)", got)
	}
}

func TestKAISharingThirdHalfTakesAnotherGPU(t *testing.T) {
	begin(t)
	placed := boundHalves(t, training, 3)
	byGroup := map[string][]string{}
	for name, g := range placed {
		byGroup[g.group] = append(byGroup[g.group], name)
	}
	var sizes []int
	for _, names := range byGroup {
		sizes = append(sizes, len(names))
	}
	sort.Ints(sizes)
	if fmt.Sprint(sizes) != "[1 2]" {
		t.Fatalf("three half-GPU pods on GPUs %v, want two on one GPU and the third on another", byGroup)
	}
	checkReserved(t, "training", placed)
	// Two GPUs are held on the Nodes; the queue is charged 1.5: fractions,
	// not devices.
	waitQueueGPUs(t, "training", 1.5)
}

func TestKAISharingOverQuotaHeld(t *testing.T) {
	begin(t)
	reset(t, sharing)
	// notebooks holds one GPU and borrows none: two halves fill it, the
	// third waits although 31 GPUs are idle.
	halves(t, notebooks, "half", 3)
	waitBound(t, "notebooks", "half", 2)
	c, err := countPods(ctxFor(t), "notebooks", "half")
	if err != nil || c.pending != 1 {
		t.Errorf("notebooks' third half-GPU pod is not held pending: %s (%v)", c, err)
	}
	waitQueueGPUs(t, "notebooks", 1)
}

func TestKAISharingRefusedOnUnsharedFlavor(t *testing.T) {
	begin(t)
	// kai-scheduling.toml's h100 flavor does not share (gpu_sharing
	// defaults to "none"): half a GPU on training's own queue is refused
	// at admission, the message naming the flavor.
	reset(t, scheduling)
	waitSharingRule(t, training, false)
	_, err := env.cp.Kube.CoreV1().Pods("training").Create(ctxFor(t), halfPod(training, "half"), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "flavor h100 "+sharingRule) {
		t.Errorf("half a GPU of the unshared flavor h100 was not refused naming the flavor: %v", err)
	}
}
