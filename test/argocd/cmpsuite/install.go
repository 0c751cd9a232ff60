package cmpsuite

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// testInstallComponent builds Argo CD's own install manifest with the
// argocd/install Component, as docs/argocd.md tells users to, and checks the
// sidecar lands in this release's argocd-repo-server beside its volumes.
func (s *suite) testInstallComponent(t *testing.T) {
	argoModule := s.argo.Module()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", argoModule).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", argoModule, err)
	}
	install, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "manifests", "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	component, err := filepath.Rel(dir, filepath.Join(s.repoRoot, "argocd", "install"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"install.yaml": string(install),
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
			"namespace: argocd\nresources:\n  - install.yaml\ncomponents:\n  - " + component + "\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	resources, err := s.argo.Kustomize(dir)
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}

	var repoServer *appsv1.Deployment
	var pluginCM *corev1.ConfigMap
	for _, m := range resources {
		r := &unstructured.Unstructured{Object: m}
		switch {
		case r.GetKind() == "Deployment" && r.GetName() == "argocd-repo-server":
			repoServer = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, repoServer); err != nil {
				t.Fatal(err)
			}
		case r.GetKind() == "ConfigMap" && r.GetName() == "tenancy-cmp-plugin":
			pluginCM = &corev1.ConfigMap{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, pluginCM); err != nil {
				t.Fatal(err)
			}
		}
	}
	if repoServer == nil || pluginCM == nil {
		t.Fatalf("build lacks the repo-server Deployment (%v) or the plugin ConfigMap (%v)", repoServer != nil, pluginCM != nil)
	}

	plugin, err := os.ReadFile(filepath.Join(s.repoRoot, "argocd", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(plugin), pluginCM.Data["plugin.yaml"]); diff != "" {
		t.Errorf("ConfigMap plugin.yaml differs from argocd/plugin.yaml (-want,+got):\n%s", diff)
	}
	if pluginCM.Namespace != "argocd" {
		t.Errorf("ConfigMap namespace %q, want argocd", pluginCM.Namespace)
	}

	spec := repoServer.Spec.Template.Spec
	var names []string
	var sidecar *corev1.Container
	for i, c := range spec.Containers {
		names = append(names, c.Name)
		if c.Name == "tenancy" {
			sidecar = &spec.Containers[i]
		}
	}
	// The patch adds a container; it must not replace Argo CD's.
	sort.Strings(names)
	if diff := cmp.Diff([]string{"argocd-repo-server", "tenancy"}, names); diff != "" {
		t.Fatalf("repo-server containers (-want,+got):\n%s", diff)
	}
	// Strategic merge puts the sidecar first, which kubectl would pick.
	if got := repoServer.Spec.Template.Annotations["kubectl.kubernetes.io/default-container"]; got != "argocd-repo-server" {
		t.Errorf("default-container annotation %q, want argocd-repo-server", got)
	}

	// The sidecar runs the binary copyutil copies into var-files.
	copied := ""
	for _, c := range spec.InitContainers {
		if c.Name == "copyutil" {
			copied = c.Command[len(c.Command)-1]
		}
	}
	if copied == "" || sidecar.Command[0] != copied {
		t.Errorf("sidecar runs %v, but copyutil copies argocd-cmp-server to %q", sidecar.Command, copied)
	}

	// Every volume the sidecar mounts exists in the built pod.
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	for _, m := range sidecar.VolumeMounts {
		if !volumes[m.Name] {
			t.Errorf("sidecar mounts volume %q, which the pod does not have", m.Name)
		}
	}
	if sc := sidecar.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 999 ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("sidecar securityContext %+v: want uid 999 and a read-only root filesystem", sidecar.SecurityContext)
	}
}
