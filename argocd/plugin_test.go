// Tests of the plugin's configuration files: plugin.yaml, and the install
// Component that ships it to Argo CD. Argo CD's own server reads plugin.yaml in
// the end-to-end tests under test/argocd/; these check the promises the files
// make (no shell, the announced parameters, a hardened sidecar) quickly.
package argocd_test

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/argocd/params"
)

var update = flag.Bool("update", false, "rewrite install/plugin-configmap.yaml from plugin.yaml")

const configMapPath = "install/plugin-configmap.yaml"

// pluginConfig is the part of Argo CD's ConfigManagementPlugin these tests read.
type pluginConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version  string   `json:"version"`
		Init     *command `json:"init"`
		Generate command  `json:"generate"`
		Discover struct {
			FileName string         `json:"fileName"`
			Find     map[string]any `json:"find"`
		} `json:"discover"`
		Parameters struct {
			Static []struct {
				Name           string `json:"name"`
				Title          string `json:"title"`
				Tooltip        string `json:"tooltip"`
				Required       bool   `json:"required"`
				ItemType       string `json:"itemType"`
				CollectionType string `json:"collectionType"`
				String         string `json:"string"`
			} `json:"static"`
			Dynamic *command `json:"dynamic"`
		} `json:"parameters"`
		PreserveFileMode bool `json:"preserveFileMode"`
		ProvideGitCreds  bool `json:"provideGitCreds"`
	} `json:"spec"`
}

type command struct {
	Command []string `json:"command"`
	Args    []string `json:"args"`
}

func readPlugin(t *testing.T) ([]byte, pluginConfig) {
	t.Helper()
	data, err := os.ReadFile("plugin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg pluginConfig
	// Strict: Argo CD ignores a misspelt field; this test does not.
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		t.Fatalf("plugin.yaml: %v", err)
	}
	return data, cfg
}

func TestPluginYAML(t *testing.T) {
	_, cfg := readPlugin(t)
	if cfg.APIVersion != "argoproj.io/v1alpha1" || cfg.Kind != "ConfigManagementPlugin" || cfg.Metadata.Name != "tenancy" {
		t.Errorf("plugin.yaml is %s %s %q, want argoproj.io/v1alpha1 ConfigManagementPlugin \"tenancy\"", cfg.APIVersion, cfg.Kind, cfg.Metadata.Name)
	}
	if cfg.Spec.Version != "" {
		t.Errorf("spec.version = %q: it would rename the plugin to tenancy-%s and break Applications naming it", cfg.Spec.Version, cfg.Spec.Version)
	}
	// The binary itself: a shell pipeline could exit 0 after a failure.
	if diff := cmp.Diff(command{Command: []string{"tenancy", "argocd", "generate"}}, cfg.Spec.Generate); diff != "" {
		t.Errorf("spec.generate (-want,+got):\n%s", diff)
	}
	if cfg.Spec.Init != nil || cfg.Spec.Parameters.Dynamic != nil {
		t.Errorf("plugin.yaml runs more than the generate command: init %+v, dynamic parameters %+v", cfg.Spec.Init, cfg.Spec.Parameters.Dynamic)
	}
	if cfg.Spec.Discover.FileName != "tenancy.toml" || cfg.Spec.Discover.Find != nil {
		t.Errorf("discover = %+v, want only fileName tenancy.toml", cfg.Spec.Discover)
	}
	if cfg.Spec.ProvideGitCreds {
		t.Error("provideGitCreds is set: the plugin needs no Git credentials and must not see them")
	}

	var names []string
	for _, p := range cfg.Spec.Parameters.Static {
		names = append(names, p.Name)
		if p.ItemType != "string" || p.CollectionType != "string" {
			t.Errorf("parameter %s is %s/%s, want a string", p.Name, p.ItemType, p.CollectionType)
		}
		// A default shown in the UI must be one generate accepts.
		if p.String != "" {
			env := []string{params.EnvParameters + `=[{"name":"` + p.Name + `","string":"` + p.String + `"}]`}
			if _, err := params.Resolve(env); err != nil {
				t.Errorf("parameter %s: announced default %q is rejected: %v", p.Name, p.String, err)
			}
		}
	}
	if diff := cmp.Diff([]string{params.Backend, params.KueueAPI, params.Cluster}, names); diff != "" {
		t.Errorf("announced parameters (-want,+got):\n%s", diff)
	}
}

// configMap renders install/plugin-configmap.yaml from plugin.yaml, so the
// file Argo CD mounts is the file the tests run.
func configMap(plugin []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`# Generated from argocd/plugin.yaml by "go test ./argocd -update"; edit that file instead.
apiVersion: v1
kind: ConfigMap
metadata:
  name: tenancy-cmp-plugin
  labels:
    app.kubernetes.io/name: tenancy-cmp-plugin
    app.kubernetes.io/part-of: argocd
data:
  plugin.yaml: |
`)
	for _, line := range strings.SplitAfter(string(plugin), "\n") {
		if strings.TrimSpace(line) == "" {
			b.WriteString(line)
			continue
		}
		b.WriteString("    " + line)
	}
	return b.Bytes()
}

func TestConfigMapHoldsPluginYAML(t *testing.T) {
	plugin, _ := readPlugin(t)
	want := configMap(plugin)
	if *update {
		if err := os.WriteFile(configMapPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(configMapPath)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is stale; run go test ./argocd -update (-want,+got):\n%s", configMapPath, diff)
	}
	// And the YAML really carries the bytes, not just text that looks right.
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(got, &cm); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(plugin), cm.Data["plugin.yaml"]); diff != "" {
		t.Errorf("ConfigMap data plugin.yaml (-want,+got):\n%s", diff)
	}
}

// sidecarPatch is the part of the Deployment patch these tests read.
type sidecarPatch struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Name            string   `json:"name"`
					Image           string   `json:"image"`
					Command         []string `json:"command"`
					SecurityContext struct {
						RunAsNonRoot             *bool  `json:"runAsNonRoot"`
						RunAsUser                *int64 `json:"runAsUser"`
						ReadOnlyRootFilesystem   *bool  `json:"readOnlyRootFilesystem"`
						AllowPrivilegeEscalation *bool  `json:"allowPrivilegeEscalation"`
						Capabilities             struct {
							Drop []string `json:"drop"`
						} `json:"capabilities"`
					} `json:"securityContext"`
					VolumeMounts []struct {
						Name      string `json:"name"`
						MountPath string `json:"mountPath"`
						SubPath   string `json:"subPath"`
					} `json:"volumeMounts"`
				} `json:"containers"`
				Volumes []struct {
					Name      string                 `json:"name"`
					ConfigMap *struct{ Name string } `json:"configMap"`
					EmptyDir  *struct{}              `json:"emptyDir"`
				} `json:"volumes"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

func TestSidecarPatch(t *testing.T) {
	data, err := os.ReadFile("install/repo-server-sidecar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var p sidecarPatch
	if err := yaml.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if p.Kind != "Deployment" || p.Metadata.Name != "argocd-repo-server" {
		t.Fatalf("patch targets %s %s, want Deployment argocd-repo-server", p.Kind, p.Metadata.Name)
	}
	spec := p.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("patch adds %d containers, want the one sidecar", len(spec.Containers))
	}
	c := spec.Containers[0]
	if diff := cmp.Diff([]string{"/var/run/argocd/argocd-cmp-server"}, c.Command); diff != "" {
		t.Errorf("sidecar command (-want,+got):\n%s", diff)
	}
	sc := c.SecurityContext
	if sc.RunAsUser == nil || *sc.RunAsUser != 999 {
		t.Errorf("runAsUser is not 999 (Argo CD's plugin user)")
	}
	for name, v := range map[string]*bool{"runAsNonRoot": sc.RunAsNonRoot, "readOnlyRootFilesystem": sc.ReadOnlyRootFilesystem} {
		if v == nil || !*v {
			t.Errorf("securityContext.%s is not true", name)
		}
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("securityContext.allowPrivilegeEscalation is not false")
	}
	if diff := cmp.Diff([]string{"ALL"}, sc.Capabilities.Drop); diff != "" {
		t.Errorf("capabilities.drop (-want,+got):\n%s", diff)
	}

	type mount struct{ Volume, SubPath string }
	mounts := map[string]mount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = mount{m.Name, m.SubPath}
	}
	wantMounts := map[string]mount{
		"/var/run/argocd":                            {"var-files", ""},
		"/home/argocd/cmp-server/plugins":            {"plugins", ""},
		"/home/argocd/cmp-server/config/plugin.yaml": {"tenancy-cmp-plugin", "plugin.yaml"},
		"/tmp": {"tenancy-cmp-tmp", ""},
	}
	if diff := cmp.Diff(wantMounts, mounts); diff != "" {
		t.Errorf("sidecar mounts (-want,+got):\n%s", diff)
	}
	volumes := map[string]string{}
	for _, v := range spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			volumes[v.Name] = "configMap " + v.ConfigMap.Name
		case v.EmptyDir != nil:
			volumes[v.Name] = "emptyDir"
		}
	}
	wantVolumes := map[string]string{
		// var-files and plugins come from Argo CD's own Deployment.
		"tenancy-cmp-plugin": "configMap tenancy-cmp-plugin",
		"tenancy-cmp-tmp":    "emptyDir",
	}
	if diff := cmp.Diff(wantVolumes, volumes); diff != "" {
		t.Errorf("patch volumes (-want,+got):\n%s", diff)
	}
}
