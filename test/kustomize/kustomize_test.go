// Package kustomize_test runs the tenancy KRM function inside the real
// kustomize CLI, built from the Go module proxy at the version this module's
// go.mod pins, on the examples under examples/kustomize.
package kustomize_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// Binaries built once for all tests.
var (
	kustomizeBin string // cached by version under the user cache directory
	binDir       string // holds the tenancy binary; put first on PATH
	repoRoot     string
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	var err error
	if repoRoot, err = filepath.Abs("../.."); err != nil {
		return 0, err
	}
	if kustomizeBin, err = buildKustomize(); err != nil {
		return 0, err
	}
	if binDir, err = os.MkdirTemp("", "tenancy-e2e-bin-"); err != nil {
		return 0, err
	}
	defer os.RemoveAll(binDir)
	build := exec.Command("go", "build", "-o", filepath.Join(binDir, "tenancy"), "./cmd/tenancy")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("build tenancy: %v\n%s", err, out)
	}
	return m.Run(), nil
}

// buildKustomize builds the kustomize CLI at the version go.mod pins, once per
// version: $TENANCY_CACHE/kustomize/VERSION/kustomize, TENANCY_CACHE defaulting
// to ${XDG_CACHE_HOME:-$HOME/.cache}/tenancy.
func buildKustomize() (string, error) {
	const module = "sigs.k8s.io/kustomize/kustomize/v5"
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", module).Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %v", module, err)
	}
	version := strings.TrimSpace(string(out))
	cache := os.Getenv("TENANCY_CACHE") // set by the Makefile
	if cache == "" {
		userCache, err := os.UserCacheDir() // $XDG_CACHE_HOME or ~/.cache
		if err != nil {
			return "", err
		}
		cache = filepath.Join(userCache, "tenancy")
	}
	dir := filepath.Join(cache, "kustomize", version)
	bin := filepath.Join(dir, "kustomize")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Build beside the final name and rename, so an interrupted build never
	// leaves a broken binary in the cache.
	tmp, err := os.CreateTemp(dir, "kustomize-*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if out, err := exec.Command("go", "build", "-o", tmp.Name(), module).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build kustomize %s: %v\n%s", version, err, out)
	}
	return bin, os.Rename(tmp.Name(), bin)
}

// kustomizeBuild runs kustomize build with plugins and exec functions enabled,
// the tenancy binary first on PATH.
func kustomizeBuild(t *testing.T, dir string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(kustomizeBin, "build", "--enable-alpha-plugins", "--enable-exec", dir)
	cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// tenancyRender runs `tenancy render` on file with extra flags.
func tenancyRender(t *testing.T, file string, flags ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "tenancy"), append([]string{"render", file}, flags...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("tenancy render %s: %v\n%s", file, err, errOut.String())
	}
	return out.String()
}

// objects parses a YAML stream into objects keyed by apiVersion/kind/namespace/name.
func objects(t *testing.T, stream string) map[string]map[string]any {
	t.Helper()
	objs := map[string]map[string]any{}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(stream, -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("parse %q: %v", doc, err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		key := fmt.Sprintf("%v/%v/%v/%v", obj["apiVersion"], obj["kind"], meta["namespace"], meta["name"])
		if _, dup := objs[key]; dup {
			t.Fatalf("object %s appears twice", key)
		}
		objs[key] = obj
	}
	if len(objs) == 0 {
		t.Fatalf("no objects in %q", stream)
	}
	return objs
}

// copyDir copies the example tree to a temporary directory so a test can
// change files without touching the repository.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func examples(t *testing.T) string {
	t.Helper()
	return copyDir(t, filepath.Join(repoRoot, "examples", "kustomize"))
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBaseEqualsRender: the base's build is the objects tenancy render prints.
func TestBaseEqualsRender(t *testing.T) {
	ex := examples(t)
	out, stderr, err := kustomizeBuild(t, filepath.Join(ex, "base"))
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, stderr)
	}
	want := objects(t, tenancyRender(t, filepath.Join(ex, "base", "tenancy.toml")))
	if diff := cmp.Diff(want, objects(t, out)); diff != "" {
		t.Errorf("kustomize build differs from tenancy render (-want,+got):\n%s", diff)
	}
}

// TestOverlayPatchesClusterQueue: the overlay's build is tenancy render plus
// the overlay's patch, and nothing else.
func TestOverlayPatchesClusterQueue(t *testing.T) {
	ex := examples(t)
	out, stderr, err := kustomizeBuild(t, filepath.Join(ex, "overlays", "maintenance"))
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, stderr)
	}
	want := objects(t, tenancyRender(t, filepath.Join(ex, "base", "tenancy.toml")))
	patched := 0
	for _, obj := range want {
		meta := obj["metadata"].(map[string]any)
		if obj["kind"] == "ClusterQueue" && meta["name"] == "research" {
			obj["spec"].(map[string]any)["stopPolicy"] = "Hold"
			patched++
		}
	}
	if patched != 1 {
		t.Fatalf("tenancy render has %d ClusterQueues named research, want 1", patched)
	}
	if diff := cmp.Diff(want, objects(t, out)); diff != "" {
		t.Errorf("overlay build differs from tenancy render plus the patch (-want,+got):\n%s", diff)
	}
}

// TestBackends: the function's options reach the renderer, as render's flags do.
func TestBackends(t *testing.T) {
	tests := map[string]struct {
		spec  string
		flags []string
		// wantStderr: the function's warnings, shown by kustomize while the
		// build succeeds.
		wantStderr *regexp.Regexp
		// agreement replaces the base's tenancy.toml with this file of the
		// repository when set.
		agreement string
	}{
		"kai": {
			spec:       "  backend: kai\n",
			flags:      []string{"--backend", "kai"},
			wantStderr: regexp.MustCompile(`tenancy\.toml:\d+:\d+: warning: teams\.training\.lendable: kai: `),
		},
		"kueue v1beta1":    {spec: "  kueueAPI: v1beta1\n", flags: []string{"--kueue-api", "v1beta1"}},
		"inline agreement": {spec: "", flags: nil},
		"a fleet's worker": {
			agreement: "examples/fleet/tenancy.toml",
			spec:      "  cluster: east\n",
			flags:     []string{"--cluster", "east"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ex := examples(t)
			base := filepath.Join(ex, "base")
			if tc.agreement != "" {
				data, err := os.ReadFile(filepath.Join(repoRoot, tc.agreement))
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(base, "tenancy.toml"), string(data))
			}
			agreement, err := os.ReadFile(filepath.Join(base, "tenancy.toml"))
			if err != nil {
				t.Fatal(err)
			}
			source := "  file: tenancy.toml\n"
			if name == "inline agreement" {
				source = "  agreement: |\n    " + strings.ReplaceAll(strings.TrimRight(string(agreement), "\n"), "\n", "\n    ") + "\n"
				if err := os.Remove(filepath.Join(base, "tenancy.toml")); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, filepath.Join(base, "tenancy-generator.yaml"), generatorYAML+source+tc.spec)
			out, stderr, err := kustomizeBuild(t, base)
			if err != nil {
				t.Fatalf("kustomize build: %v\n%s", err, stderr)
			}
			if tc.wantStderr != nil && !tc.wantStderr.MatchString(stderr) {
				t.Errorf("kustomize's stderr does not match %q:\n%s", tc.wantStderr, stderr)
			}
			agreementFile := filepath.Join(t.TempDir(), "tenancy.toml")
			writeFile(t, agreementFile, string(agreement))
			want := objects(t, tenancyRender(t, agreementFile, tc.flags...))
			if diff := cmp.Diff(want, objects(t, out)); diff != "" {
				t.Errorf("kustomize build differs from tenancy render %v (-want,+got):\n%s", tc.flags, diff)
			}
		})
	}
}

const generatorYAML = `apiVersion: tenancy.dev/v1alpha1
kind: TenancyGenerator
metadata:
  name: gpu-tenancy
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: tenancy
spec:
`

// TestFailuresStopTheBuild: a broken agreement or a refused path makes
// kustomize exit non-zero with the problem, line included, in its output,
// and print no manifests.
func TestFailuresStopTheBuild(t *testing.T) {
	tests := map[string]struct {
		agreement string // replaces base/tenancy.toml when set
		spec      string // replaces the generator's spec when set
		want      []*regexp.Regexp
	}{
		"broken agreement": {
			// Line 11: training lends more than it is guaranteed.
			agreement: "version = 1\nname = \"gpu-pool\"\n\n[flavors.h100]\nresource = \"nvidia.com/gpu\"\ncapacity = 32\n\n" +
				"[teams.training]\nguaranteed = 16\nborrow = 8\nlendable = 20\n",
			want: []*regexp.Regexp{regexp.MustCompile(`tenancy\.toml:11:\d+: teams\.training\.lendable: `)},
		},
		"TOML syntax error": {
			agreement: "version = 1\nname = \"gpu-pool\"\n[flavors.h100\n",
			want:      []*regexp.Regexp{regexp.MustCompile(`tenancy\.toml:3(:\d+)?: `)},
		},
		"path outside the kustomization": {
			spec: "  file: ../base/tenancy.toml\n",
			want: []*regexp.Regexp{regexp.MustCompile(`spec\.file: "\.\./base/tenancy\.toml" is outside the kustomization directory`)},
		},
		"typo in the generator": {
			spec: "  file: tenancy.toml\n  bakend: kai\n",
			want: []*regexp.Regexp{regexp.MustCompile(`spec\.bakend: unknown field`)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ex := examples(t)
			base := filepath.Join(ex, "base")
			if tc.agreement != "" {
				writeFile(t, filepath.Join(base, "tenancy.toml"), tc.agreement)
			}
			if tc.spec != "" {
				writeFile(t, filepath.Join(base, "tenancy-generator.yaml"), generatorYAML+tc.spec)
			}
			out, stderr, err := kustomizeBuild(t, base)
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) {
				t.Fatalf("kustomize build error = %v, want a non-zero exit; stdout:\n%s", err, out)
			}
			if out != "" {
				t.Errorf("kustomize printed manifests on failure:\n%s", out)
			}
			for _, re := range tc.want {
				if !re.MatchString(stderr) {
					t.Errorf("kustomize's stderr does not match %q:\n%s", re, stderr)
				}
			}
		})
	}
}
