package kustomize

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

// documentedPatch is the YAML block of docs/kustomize.md that starts with
// "# windows-controller-patch.yaml".
func documentedPatch(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/kustomize.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n# windows-controller-patch.yaml\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("docs/kustomize.md has no windows-controller-patch.yaml block")
	}
	return block
}

// TestWindowsControllerPatch: the patch docs/kustomize.md documents sets
// the windows controller's replicas, image, resources, node selector and
// tolerations when merged as kustomize's patches merge (kyaml's merge2),
// and leaves the rest of the rendered Deployment as it was.
func TestWindowsControllerPatch(t *testing.T) {
	res, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: []byte(windowstest.Agreement)}, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rendered string
	for _, o := range res.Objects {
		if o.Kind() == "Deployment" {
			rendered = string(o.YAML)
		}
	}
	if rendered == "" {
		t.Fatal("the render has no Deployment")
	}
	patched, err := merge2.MergeStrings(documentedPatch(t), rendered, false, yaml.MergeOptions{ListIncreaseDirection: yaml.MergeOptionsListAppend})
	if err != nil {
		t.Fatal(err)
	}
	var before, after appsv1.Deployment
	if err := sigsyaml.UnmarshalStrict([]byte(rendered), &before); err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.UnmarshalStrict([]byte(patched), &after); err != nil {
		t.Fatalf("the patched Deployment: %v\n%s", err, patched)
	}
	if after.Name != before.Name || *after.Spec.Replicas != 3 {
		t.Errorf("name %s, replicas %d; want %s, 3", after.Name, *after.Spec.Replicas, before.Name)
	}
	pod := after.Spec.Template.Spec
	if diff := cmp.Diff(map[string]string{"node-role.kubernetes.io/control-plane": ""}, pod.NodeSelector); diff != "" {
		t.Errorf("nodeSelector (-want,+got):\n%s", diff)
	}
	wantTolerations := []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	if diff := cmp.Diff(wantTolerations, pod.Tolerations); diff != "" {
		t.Errorf("tolerations (-want,+got):\n%s", diff)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want the rendered one patched", len(pod.Containers))
	}
	got, was := pod.Containers[0], before.Spec.Template.Spec.Containers[0]
	if got.Image != "registry.example.com/mirror/tenancy-argocd:v0.1.0" {
		t.Errorf("image %s", got.Image)
	}
	wantResources := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("96Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("192Mi")},
	}
	if !got.Resources.Requests.Cpu().Equal(*wantResources.Requests.Cpu()) || !got.Resources.Requests.Memory().Equal(*wantResources.Requests.Memory()) || !got.Resources.Limits.Memory().Equal(*wantResources.Limits.Memory()) {
		t.Errorf("resources %v, want %v", got.Resources, wantResources)
	}
	// What the patch does not name stays as rendered.
	got.Image, got.Resources = was.Image, was.Resources
	if diff := cmp.Diff(was, got); diff != "" {
		t.Errorf("the container beyond image and resources (-rendered,+patched):\n%s", diff)
	}
	if diff := cmp.Diff(before.Spec.Template.Spec.Volumes, pod.Volumes); diff != "" {
		t.Errorf("volumes (-rendered,+patched):\n%s", diff)
	}
}
