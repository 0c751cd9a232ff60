package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
)

// argocdRun runs "tenancy argocd ARGS" in dir with exactly the environment
// environ, as Argo CD's cmp-server would start it.
func argocdRun(dir string, environ []string, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	e := &env{
		stdin:   strings.NewReader(""),
		stdout:  &out,
		stderr:  &errOut,
		getenv:  func(k string) string { return vars[k] },
		environ: func() []string { return environ },
		dir:     dir,
	}
	code = run(e, append([]string{"argocd"}, args...))
	return out.String(), errOut.String(), code
}

// referenceAgreement is the repository's tenancy.toml.
func referenceAgreement(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../../tenancy.toml")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fleetAgreement is examples/fleet's agreement: a manager, hub, and the
// workers east and west.
func fleetAgreement(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../../examples/fleet/tenancy.toml")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// appDir makes an Application source directory holding files.
func appDir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestArgoCDGenerate(t *testing.T) {
	ref := referenceAgreement(t)
	tests := map[string]struct {
		environ []string
		// key is the agreement's backend key, written before the reference.
		key string
		// fleet renders examples/fleet's agreement instead of the reference.
		fleet bool
		// want is what tenancy render prints with these options.
		want generator.Options
		// wantVersion must occur in the output, so the cases cannot all
		// render the same thing and still pass.
		wantVersion string
		wantLog     string
	}{
		"no parameters": {
			environ:     []string{"ARGOCD_APP_NAME=queues", "ARGOCD_APP_PARAMETERS=null"},
			want:        generator.Options{Backend: generator.Kueue, KueueAPI: "v1beta2"},
			wantVersion: "apiVersion: kueue.x-k8s.io/v1beta2",
			wantLog:     "backend kueue (default), Kueue API v1beta2 (default)",
		},
		"cluster serving only Kueue v1beta1": {
			environ:     []string{"KUBE_API_VERSIONS=v1,kueue.x-k8s.io/v1beta1,kueue.x-k8s.io/v1beta1/ClusterQueue"},
			want:        generator.Options{Backend: generator.Kueue, KueueAPI: "v1beta1"},
			wantVersion: "apiVersion: kueue.x-k8s.io/v1beta1",
			wantLog:     "Kueue API v1beta1 (KUBE_API_VERSIONS)",
		},
		"backend parameter": {
			environ:     []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","string":"kai"}]`, "PARAM_BACKEND=kai", "ARGOCD_ENV_TENANCY_BACKEND=kueue"},
			want:        generator.Options{Backend: generator.KAI},
			wantVersion: "apiVersion: scheduling.run.ai/v2",
			wantLog:     "backend kai (ARGOCD_APP_PARAMETERS parameter backend)",
		},
		"the agreement names kai": {
			key:         `backend = "kai"`,
			want:        generator.Options{Backend: generator.KAI},
			wantVersion: "apiVersion: scheduling.run.ai/v2",
			wantLog:     "backend kai (the agreement)",
		},
		"plugin.env over the agreement's first backend": {
			key:         `backend = ["kai", "kueue"]`,
			environ:     []string{"ARGOCD_ENV_TENANCY_BACKEND=kueue"},
			want:        generator.Options{Backend: generator.Kueue},
			wantVersion: "apiVersion: kueue.x-k8s.io/v1beta2",
			wantLog:     "backend kueue (ARGOCD_ENV_TENANCY_BACKEND)",
		},
		"a fleet's worker, from the cluster parameter": {
			fleet:       true,
			environ:     []string{`ARGOCD_APP_PARAMETERS=[{"name":"cluster","string":"east"}]`, "PARAM_CLUSTER=east"},
			want:        generator.Options{Cluster: "east"},
			wantVersion: "apiVersion: kueue.x-k8s.io/v1beta2",
			wantLog:     "cluster east (ARGOCD_APP_PARAMETERS parameter cluster)",
		},
		"a fleet's manager, from plugin.env": {
			fleet:       true,
			environ:     []string{"ARGOCD_ENV_TENANCY_CLUSTER=hub"},
			want:        generator.Options{Cluster: "hub"},
			wantVersion: "kind: MultiKueueConfig",
			wantLog:     "cluster hub (ARGOCD_ENV_TENANCY_CLUSTER)",
		},
		"plugin.env over the cluster's versions": {
			environ:     []string{"ARGOCD_ENV_TENANCY_KUEUE_API=v1beta1", "KUBE_API_VERSIONS=kueue.x-k8s.io/v1beta2"},
			want:        generator.Options{Backend: generator.Kueue, KueueAPI: "v1beta1"},
			wantVersion: "apiVersion: kueue.x-k8s.io/v1beta1",
			wantLog:     "Kueue API v1beta1 (ARGOCD_ENV_TENANCY_KUEUE_API)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			agreement := ref
			if tc.fleet {
				agreement = fleetAgreement(t)
			}
			if tc.key != "" {
				agreement = append([]byte(tc.key+"\n"), ref...)
			}
			dir := appDir(t, map[string][]byte{"tenancy.toml": agreement})
			stdout, stderr, code := argocdRun(dir, tc.environ, "generate")
			if code != exitOK {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			want, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: agreement}, tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want.Manifests), stdout); diff != "" {
				t.Errorf("stdout (-want,+got):\n%s", diff)
			}
			if !strings.Contains(stdout, tc.wantVersion+"\n") {
				t.Errorf("stdout has no %q", tc.wantVersion)
			}
			if !strings.Contains(stderr, tc.wantLog) {
				t.Errorf("stderr %q does not say %q", stderr, tc.wantLog)
			}
		})
	}
}

func TestArgoCDGenerateFailsClosed(t *testing.T) {
	ref := referenceAgreement(t)
	fleet := fleetAgreement(t)
	// Training lends more than it is guaranteed: invalid, at a known line.
	broken := bytes.Replace(ref, []byte("guaranteed = 16\nlendable = 8"), []byte("guaranteed = 16\nlendable = 20"), 1)
	if bytes.Equal(broken, ref) {
		t.Fatal("the reference agreement changed; update the broken case")
	}
	brokenLine := 1 + bytes.Count(broken[:bytes.Index(broken, []byte("lendable = 20"))], []byte("\n"))

	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "tenancy.toml"), ref, 0o644); err != nil {
		t.Fatal(err)
	}

	tests := map[string]struct {
		files   map[string][]byte
		symlink string // tenancy.toml links here when set
		environ []string
		args    []string
		code    int
		// wantStderr must all appear in stderr.
		wantStderr []string
	}{
		"invalid agreement": {
			files:      map[string][]byte{"tenancy.toml": broken},
			code:       exitFailure,
			wantStderr: []string{"tenancy.toml:" + strconv.Itoa(brokenLine) + ":", "teams.training.lendable"},
		},
		"a backend the agreement does not name": {
			files:      map[string][]byte{"tenancy.toml": append([]byte("backend = \"kueue\"\n"), ref...)},
			environ:    []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","string":"kai"}]`},
			code:       exitFailure,
			wantStderr: []string{"tenancy.toml:1:11: backend: the agreement is written for kueue, and ARGOCD_APP_PARAMETERS parameter backend asks for kai"},
		},
		"TOML syntax error": {
			files:      map[string][]byte{"tenancy.toml": []byte("version = 1\nname = \"gpu-pool\"\n[teams.training\n")},
			code:       exitFailure,
			wantStderr: []string{"tenancy.toml:3"},
		},
		"no tenancy.toml": {
			files:      map[string][]byte{"kustomization.yaml": []byte("resources: []\n")},
			code:       exitFailure,
			wantStderr: []string{"tenancy argocd generate: tenancy.toml: no such file in the Application's source path"},
		},
		"tenancy.toml is a symlink out of the source path": {
			symlink:    filepath.Join(outside, "tenancy.toml"),
			code:       exitFailure,
			wantStderr: []string{"tenancy.toml: path escapes the directory"},
		},
		"tenancy.toml over 1 MiB": {
			files:      map[string][]byte{"tenancy.toml": append(append([]byte{}, ref...), bytes.Repeat([]byte("# padding\n"), generator.MaxAgreementSize/10)...)},
			code:       exitFailure,
			wantStderr: []string{"agreement exceeds 1 MiB"},
		},
		"invalid parameter": {
			files:      map[string][]byte{"tenancy.toml": ref},
			environ:    []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","string":"volcano"}]`, "PARAM_BACKEND=volcano"},
			code:       exitUsage,
			wantStderr: []string{`ARGOCD_APP_PARAMETERS parameter backend: invalid options: backend "volcano": must be kueue or kai`},
		},
		"a fleet agreement without the cluster parameter": {
			// An ApplicationSet that forgot the parameter: no cluster's
			// objects land in another.
			files:      map[string][]byte{"tenancy.toml": fleet},
			environ:    []string{"ARGOCD_APP_PARAMETERS=null"},
			code:       exitUsage,
			wantStderr: []string{"tenancy.toml is a fleet of clusters: say which part to render with the plugin parameter cluster (one of hub, east, west)"},
		},
		"a cluster the fleet does not have": {
			files:      map[string][]byte{"tenancy.toml": fleet},
			environ:    []string{"ARGOCD_ENV_TENANCY_CLUSTER=north"},
			code:       exitUsage,
			wantStderr: []string{`ARGOCD_ENV_TENANCY_CLUSTER asks for cluster "north", which tenancy.toml does not have: its parts are hub, east, west`},
		},
		"a cluster for an agreement without [clusters]": {
			files:      map[string][]byte{"tenancy.toml": ref},
			environ:    []string{"PARAM_CLUSTER=east"},
			code:       exitUsage,
			wantStderr: []string{`PARAM_CLUSTER asks for cluster "east", but tenancy.toml has no [clusters]`},
		},
		"the fleet's manager for KAI": {
			files:      map[string][]byte{"tenancy.toml": fleet},
			environ:    []string{"PARAM_CLUSTER=hub", "PARAM_BACKEND=kai"},
			code:       exitUsage,
			wantStderr: []string{`the manager "hub" dispatches jobs with Kueue's MultiKueue`},
		},
		"misspelt plugin.env entry": {
			files:      map[string][]byte{"tenancy.toml": ref},
			environ:    []string{"ARGOCD_ENV_TENANCY_KUEUEAPI=v1beta1"},
			code:       exitUsage,
			wantStderr: []string{"unknown plugin.env entry TENANCY_KUEUEAPI"},
		},
		"a FILE argument": {
			files:      map[string][]byte{"tenancy.toml": ref},
			args:       []string{"generate", "../tenancy.toml"},
			code:       exitUsage,
			wantStderr: []string{`unexpected argument "../tenancy.toml"`},
		},
		"unknown flag": {
			files:      map[string][]byte{"tenancy.toml": ref},
			args:       []string{"generate", "--backend", "kai"},
			code:       exitUsage,
			wantStderr: []string{"unknown flag: --backend"},
		},
		"no subcommand": {
			args:       []string{},
			code:       exitUsage,
			wantStderr: []string{"tenancy argocd generate"},
		},
		"unknown subcommand": {
			args:       []string{"init"},
			code:       exitUsage,
			wantStderr: []string{`unknown command "init"`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := appDir(t, tc.files)
			if tc.symlink != "" {
				if err := os.Symlink(tc.symlink, filepath.Join(dir, "tenancy.toml")); err != nil {
					t.Fatal(err)
				}
			}
			args := tc.args
			if args == nil {
				args = []string{"generate"}
			}
			stdout, stderr, code := argocdRun(dir, tc.environ, args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout is not empty on failure:\n%s", stdout)
			}
			for _, want := range tc.wantStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not contain %q:\n%s", want, stderr)
				}
			}
			// Argo CD shows a failed generate's stderr on the Application:
			// one paragraph, no usage text.
			if tc.args == nil && strings.Contains(stderr, "\n\n") {
				t.Errorf("stderr has a blank line:\n%s", stderr)
			}
		})
	}
}

func TestArgoCDHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"generate", "--help"}} {
		stdout, stderr, code := argocdRun(t.TempDir(), nil, args...)
		if code != exitOK || stderr != "" || !strings.Contains(stdout, "tenancy argocd generate") {
			t.Errorf("argocd %v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}
