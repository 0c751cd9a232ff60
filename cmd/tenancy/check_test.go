package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kaiRefused is accepted by Kueue and refused by KAI (see the file): the
// case of issue 17, which generator's tests check too.
func kaiRefused(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "check", "kai-refused.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// kueueOnlyExample is the multi-flavor example written for Kueue alone
// (backend = "kueue" at 5:11), as it was before KAI rendered node pools.
func kueueOnlyExample(t *testing.T) string {
	t.Helper()
	out := strings.Replace(exampleText(t, "multi-flavor"), `backend = ["kueue", "kai"]`, `backend = "kueue"`, 1)
	if !strings.Contains(out, "\nbackend = \"kueue\"") {
		t.Fatal("examples/multi-flavor has no backend line to replace")
	}
	return out
}

// TestCheckFailsWhereRenderFails: tenancy check exits 1 with exactly the
// diagnostics tenancy render --backend kai prints, with --backend kai, and
// without a flag when the agreement's backend key names KAI; without either
// it checks what render renders by default, Kueue, and passes, as render
// does.
func TestCheckFailsWhereRenderFails(t *testing.T) {
	files := map[string]string{"tenancy.toml": kaiRefused(t)}
	_, rout, rerr, rcode := runInTempDir(t, files, "render", "--backend", "kai")
	if rcode != exitFailure || rout != "" {
		t.Fatalf("render --backend kai: exit %d, stdout %q; want 1 and nothing", rcode, rout)
	}
	want := `tenancy.toml:9:15: priorities.system-high: kai: names starting with system- are reserved for Kubernetes' own PriorityClasses
tenancy.toml:10:8: teams.gpu-pool-shared: kai: queue name "gpu-pool-shared" is used both by the shared subtree and by team gpu-pool-shared
tenancy: tenancy.toml is invalid: 2 error(s)
`
	if diff := cmp.Diff(want, rerr); diff != "" {
		t.Errorf("render --backend kai stderr (-want,+got):\n%s", diff)
	}
	for _, args := range [][]string{{"check", "--backend", "kai"}, {"check", "tenancy.toml", "--backend=kai"}} {
		_, out, stderr, code := runInTempDir(t, files, args...)
		if code != exitFailure || out != "" {
			t.Errorf("%s: exit %d, stdout %q; want 1 and nothing", strings.Join(args, " "), code, out)
		}
		if diff := cmp.Diff(rerr, stderr); diff != "" {
			t.Errorf("%s: stderr differs from render --backend kai's (-render,+check):\n%s", strings.Join(args, " "), diff)
		}
	}
	for _, args := range [][]string{{"check"}, {"check", "--backend", "kueue"}} {
		_, _, stderr, code := runInTempDir(t, files, args...)
		if code != exitOK || stderr != "tenancy.toml: valid\n" {
			t.Errorf("%s: exit %d, stderr %q; want 0 and valid", strings.Join(args, " "), code, stderr)
		}
	}
	if _, _, _, code := runInTempDir(t, files, "render"); code != exitOK {
		t.Errorf("render: exit %d, want 0", code)
	}

	// The same agreement saying it is for KAI: plain check and plain
	// render refuse it alike.
	forKAI := map[string]string{"tenancy.toml": strings.Replace(kaiRefused(t), "version = 1\n", "version = 1\nbackend = \"kai\"\n", 1)}
	_, _, rerr, _ = runInTempDir(t, forKAI, "render")
	_, out, stderr, code := runInTempDir(t, forKAI, "check")
	if code != exitFailure || out != "" || !strings.Contains(stderr, "kai: names starting with system-") {
		t.Errorf("check of an agreement for KAI: exit %d, stdout %q, stderr %q; want 1, nothing and KAI's refusals", code, out, stderr)
	}
	if diff := cmp.Diff(rerr, stderr); diff != "" {
		t.Errorf("check's stderr differs from render's (-render,+check):\n%s", diff)
	}
}

// TestCheckBothBackendsSaysOnce: with both backends named, a problem of
// the agreement itself is the same for both and is printed once; each
// backend's own problems are printed beside it, named by their prefix.
func TestCheckBothBackendsSaysOnce(t *testing.T) {
	agreement := "backend = [\"kueue\", \"kai\"]\n" + strings.Replace(kaiRefused(t), "lendable = 8\n[teams.b]", "lendible = 8\n[teams.b]", 1)
	files := map[string]string{"tenancy.toml": agreement}
	_, _, stderr, code := runInTempDir(t, files, "check")
	if code != exitFailure {
		t.Errorf("exit %d, want 1", code)
	}
	want := `tenancy.toml:10:15: priorities.system-high: kai: names starting with system- are reserved for Kubernetes' own PriorityClasses
tenancy.toml:11:8: teams.gpu-pool-shared: kai: queue name "gpu-pool-shared" is used both by the shared subtree and by team gpu-pool-shared
tenancy.toml:13:1: teams.gpu-pool-shared.lendible: unknown key "lendible" (did you mean "lendable"?)
tenancy: tenancy.toml is invalid: 3 error(s)
`
	if diff := cmp.Diff(want, stderr); diff != "" {
		t.Errorf("stderr (-want,+got):\n%s", diff)
	}
}

// TestBackendRefusedAtTheKey: every command that renders or checks refuses
// a --backend the agreement's backend key does not name, at the key's
// file:line:col, with nothing on stdout; without --backend each uses the
// key.
func TestBackendRefusedAtTheKey(t *testing.T) {
	kueueOnly := kueueOnlyExample(t)
	files := map[string]string{"tenancy.toml": kueueOnly, "old.toml": kueueOnly}
	const at = "tenancy.toml:5:11: backend: the agreement is written for kueue, and --backend asks for kai"
	for _, args := range [][]string{
		{"check", "--backend", "kai"},
		{"render", "--backend", "kai"},
		{"explain", "--backend", "kai"},
		{"diff", "--backend", "kai", "old.toml", "tenancy.toml"},
	} {
		t.Run(args[0], func(t *testing.T) {
			_, stdout, stderr, code := runInTempDir(t, files, args...)
			if code == exitOK || stdout != "" {
				t.Errorf("exit %d, stdout %d bytes; want non-zero and nothing", code, len(stdout))
			}
			if !strings.Contains(stderr, at) {
				t.Errorf("stderr lacks %q:\n%s", at, stderr)
			}
		})
	}
	// Without --backend, each command does what the key says.
	_, _, rerr, code := runInTempDir(t, files, "render")
	if code != exitOK || strings.Contains(rerr, "kai:") {
		t.Errorf("render: exit %d, stderr %q; want 0 and nothing of KAI", code, rerr)
	}
	_, stdout, _, code := runInTempDir(t, files, "diff", "old.toml", "tenancy.toml")
	if code != exitOK || stdout == "" {
		t.Errorf("diff: exit %d, stdout %q; want 0 and a report", code, stdout)
	}
	_, stdout, _, code = runInTempDir(t, files, "explain")
	if code != exitOK || !strings.Contains(stdout, "\nBackend: kueue (the agreement's backend key)\n") {
		t.Errorf("explain: exit %d; want 0 and the backend named:\n%s", code, stdout)
	}
}

// TestExplainBackend: explain --backend kai says what KAI cannot hold of
// an agreement KAI accepts (warnings named "kai:"), and explain without it
// Kueue's, render's default.
func TestExplainBackend(t *testing.T) {
	files := map[string]string{"tenancy.toml": rootAgreementText(t)}
	_, stdout, _, code := runInTempDir(t, files, "explain", "--backend", "kai")
	if code != exitOK {
		t.Fatalf("explain --backend kai: exit %d", code)
	}
	for _, want := range []string{"\nBackend: kai (--backend)\n", "kai: KAI has no lending limit"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("explain --backend kai lacks %q:\n%s", want, stdout)
		}
	}
	_, stdout, _, _ = runInTempDir(t, files, "explain")
	if strings.Contains(stdout, "kai: ") {
		t.Errorf("explain without --backend shows KAI's warnings:\n%s", stdout)
	}
}

// TestArgoCDReportsWhatRenderReports: the Argo CD plugin, asked for KAI,
// fails the sync with the diagnostics render --backend kai prints (the KRM
// function's case is kustomize/testdata/kai-refused).
func TestArgoCDReportsWhatRenderReports(t *testing.T) {
	files := map[string]string{"tenancy.toml": kaiRefused(t)}
	_, _, rerr, _ := runInTempDir(t, files, "render", "--backend", "kai")
	dir := appDir(t, map[string][]byte{"tenancy.toml": []byte(kaiRefused(t))})
	stdout, stderr, code := argocdRun(dir, []string{`ARGOCD_APP_PARAMETERS=[{"name":"backend","string":"kai"}]`, "PARAM_BACKEND=kai"}, "generate")
	if code != exitFailure || stdout != "" {
		t.Fatalf("argocd generate: exit %d, stdout %q; want 1 and nothing", code, stdout)
	}
	for _, line := range strings.Split(strings.TrimSpace(rerr), "\n") {
		if strings.HasPrefix(line, "tenancy.toml:") && !strings.Contains(stderr, line) {
			t.Errorf("argocd generate's stderr lacks render's %q:\n%s", line, stderr)
		}
	}
}

// TestCheckRefusesAtTheKey: the two agreements issue 28 found tenancy check
// passing and render refusing with no position (a team namespace that is
// the windows controller's, in an agreement with windows; a team named
// default with the default LocalQueue on) make check exit 1 with the key's
// file:line:col on stderr and nothing on stdout, as render does.
func TestCheckRefusesAtTheKey(t *testing.T) {
	tests := map[string]struct {
		fixture string
		errors  []string // the error lines of stderr, warnings aside
	}{
		"a team namespace that is the windows controller's": {
			fixture: "windows-controller-namespace.toml",
			errors: []string{
				`tenancy.toml:11:15: teams.platform.namespaces[0]: namespace "tenancy-system" is where tenancy runs the lending windows' controller (rendered as soon as a team has a window) and cannot be given to a team: the team's Namespace and the controller's would be one object`,
				`tenancy: tenancy.toml is invalid: 1 error(s)`,
			},
		},
		"a team named default with the default LocalQueue on": {
			fixture: "default-team-default-queue.toml",
			errors: []string{
				`tenancy.toml:14:8: teams.default: kueue: team "default" has the name of the LocalQueue that guardrails.default_queue (line 12) puts in every team namespace: the team's own LocalQueue and the default one would be one object; rename the team, or turn default_queue off`,
				`tenancy.toml:14:8: teams.default: namespace "default" is the cluster's default namespace and cannot be given to a team: tenancy would label it with the guardrails' Pod Security levels and Argo CD prune options, and put the team's quotas and network policy on everything that runs there without a namespace of its own; give the team a namespace of its own`,
				`tenancy: tenancy.toml is invalid: 2 error(s)`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "generator", "testdata", "check", tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{"tenancy.toml": string(data)}
			for _, args := range [][]string{{"check"}, {"check", "--backend", "kueue"}, {"render"}} {
				_, out, stderr, code := runInTempDir(t, files, args...)
				if code != exitFailure || out != "" {
					t.Errorf("%s: exit %d, stdout %q; want 1 and nothing", strings.Join(args, " "), code, out)
				}
				var got []string
				for line := range strings.Lines(stderr) {
					if !strings.Contains(line, ": warning: ") {
						got = append(got, strings.TrimSuffix(line, "\n"))
					}
				}
				if diff := cmp.Diff(tc.errors, got); diff != "" {
					t.Errorf("%s: stderr's errors (-want,+got):\n%s", strings.Join(args, " "), diff)
				}
			}
		})
	}
}
