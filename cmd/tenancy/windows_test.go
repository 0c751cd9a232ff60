package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

func writeAgreement(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tenancy.toml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestExplainWindows: each window in words, open or closed at --at, and
// the next edge.
func TestExplainWindows(t *testing.T) {
	dir := writeAgreement(t, windowstest.Agreement)
	for at, want := range map[string][]string{
		"2026-12-07T21:00:00+01:00": {"inference, window 0 (20:00 to 06:00 Europe/Berlin on Mon-Fri): open", "h100: inference lends 6 of its 8 (outside: 0)", "next edge: 2026-12-08T05:00:00Z (in 9h0m0s)"},
		"2026-12-12T12:00:00+01:00": {"): closed", "next edge: 2026-12-14T19:00:00Z"},
	} {
		stdout, stderr, code := runIn(dir, "explain", "--at", at)
		if code != exitOK {
			t.Fatalf("explain --at %s: exit %d\n%s", at, code, stderr)
		}
		for _, w := range want {
			if !strings.Contains(stdout, w) {
				t.Errorf("explain --at %s lacks %q:\n%s", at, w, stdout)
			}
		}
	}
	if _, stderr, code := runIn(dir, "explain", "--at", "tomorrow"); code != exitUsage || !strings.Contains(stderr, "--at") {
		t.Errorf("a bad --at: exit %d, %s", code, stderr)
	}
}

// TestBadWindowNothingWritten: a broken window fails render at its line,
// with nothing on stdout.
func TestBadWindowNothingWritten(t *testing.T) {
	dir := writeAgreement(t, strings.Replace(windowstest.Agreement, `to = "06:00"`, `to = "6 am"`, 1))
	stdout, stderr, code := runIn(dir, "render")
	if code != exitFailure || stdout != "" {
		t.Fatalf("render: exit %d, stdout %q", code, stdout)
	}
	if want := `tenancy.toml:11:6: teams.inference.windows[0].to: "6 am" is not a time of day`; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	stdout, stderr, code = runIn(dir, "windows", "--agreement", "tenancy.toml", "--kubeconfig", "/nonexistent")
	if code != exitFailure || stdout != "" || !strings.Contains(stderr, "teams.inference.windows[0].to") {
		t.Errorf("windows with a bad agreement: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
}

// TestWindowsUsage: the controller needs an agreement; --fake-start must be
// an instant.
func TestWindowsUsage(t *testing.T) {
	dir := writeAgreement(t, windowstest.Agreement)
	if _, _, code := runIn(dir, "windows"); code != exitUsage {
		t.Errorf("windows without --agreement: exit %d", code)
	}
	if _, stderr, code := runIn(dir, "windows", "--agreement", "tenancy.toml", "--fake-start", "soon"); code != exitUsage || !strings.Contains(stderr, "--fake-start") {
		t.Errorf("a bad --fake-start: exit %d, %s", code, stderr)
	}
}

// TestVersionIsTheControllersTag: the windows controller a render writes
// runs the image of the version `tenancy --version` prints, so a render
// never deploys another tenancy than the one that made it.
func TestVersionIsTheControllersTag(t *testing.T) {
	stdout, _, code := runIn(t.TempDir(), "--version")
	v, ok := strings.CutPrefix(strings.TrimSpace(stdout), "tenancy ")
	if code != exitOK || !ok || v == "" {
		t.Fatalf("--version: exit %d, %q", code, stdout)
	}
	dir := writeAgreement(t, windowstest.Agreement)
	manifests, stderr, code := runIn(dir, "render")
	if code != exitOK {
		t.Fatalf("render: exit %d\n%s", code, stderr)
	}
	if want := `image: "ghcr.io/tenancy-dev/tenancy-argocd:` + v + `"` + "\n"; !strings.Contains(manifests, want) {
		t.Errorf("the rendered controller does not run %q", strings.TrimSpace(want))
	}
}
