package kaiwork

import (
	"context"
	"fmt"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// GPU is the whole-GPU resource of NVIDIA's device plugin.
const GPU = corev1.ResourceName("nvidia.com/gpu")

// Node is a simulated GPU Node: KWOK plays its kubelet.
type Node struct {
	Name   string
	Labels map[string]string
	Res    corev1.ResourceName
	Count  int64
}

// Object is the Node as the API server gets it.
func (n Node) Object() *corev1.Node {
	labels := map[string]string{"kubernetes.io/hostname": n.Name, "tenancy.dev/simulated": "true"}
	for k, v := range n.Labels {
		labels[k] = v
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
		n.Res:                 *resource.NewQuantity(n.Count, resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels,
			Annotations: map[string]string{controlplane.KwokNodeAnnotation: controlplane.KwokNodeValue}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// H100Nodes are n workers of 8 H100s (the reference's 4: its 32 GPUs).
func H100Nodes(n int) []Node {
	var out []Node
	for i := range n {
		out = append(out, Node{Name: fmt.Sprintf("h100-%d", i), Res: GPU, Count: 8,
			Labels: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}})
	}
	return out
}

// UseNodes makes nodes the cluster's Nodes: any others are deleted, and it
// waits until each is Ready and free of taints.
func (c *Cluster) UseNodes(t testing.TB, nodes []Node) {
	t.Helper()
	ctx := Ctx(t)
	want := map[string]bool{}
	for _, n := range nodes {
		want[n.Name] = true
	}
	list, err := c.CP.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list.Items {
		if !want[n.Name] {
			if err := c.CP.Kube.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
	}
	for _, n := range nodes {
		if _, err := c.CP.Kube.CoreV1().Nodes().Create(ctx, n.Object(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create node %s: %v", n.Name, err)
		}
	}
	c.waitFor(t, "the Nodes to be Ready and untainted", func(ctx context.Context) (bool, string) {
		list, err := c.CP.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var notReady []string
		for _, n := range list.Items {
			ready := len(n.Spec.Taints) == 0
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
					ready = false
				}
			}
			if !ready || len(n.Status.Conditions) == 0 {
				notReady = append(notReady, n.Name)
			}
		}
		sort.Strings(notReady)
		return len(list.Items) == len(nodes) && len(notReady) == 0, fmt.Sprintf("%d nodes, not ready: %v", len(list.Items), notReady)
	})
}
