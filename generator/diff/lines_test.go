package diff

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
)

// windowsAgreement is an agreement with a lending window, so the render
// holds the windows controller's ConfigMap (the agreement itself) and its
// Deployment (the agreement's digest), with the window lending lendable.
func windowsAgreement(lendable int) generator.Source {
	return generator.Source{Path: "tenancy.toml", Data: fmt.Appendf(nil, `version = 1
name = "gpu-pool"

[flavors.h100]
capacity = 16

[teams.inference]
guaranteed = 8

[[teams.inference.windows]]
from = "20:00"
to = "06:00"
lendable = %d

[teams.research]
guaranteed = 8
`, lendable)}
}

func renderWindows(t *testing.T, lendable int) *generator.Result {
	t.Helper()
	res, err := generator.Render(windowsAgreement(lendable), generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestEmbeddedAgreementDiffsLineByLine: the ConfigMap carrying the
// agreement shows the agreement's changed lines, in the text and the
// Markdown, once, and not the two escaped strings; JSON keeps old and new
// and adds the lines.
func TestEmbeddedAgreementDiffsLineByLine(t *testing.T) {
	r, err := Compare(Side{Label: "old", Result: renderWindows(t, 6)}, Side{Label: "new", Result: renderWindows(t, 5)})
	if err != nil {
		t.Fatal(err)
	}
	var cm *ObjectChange
	for i, o := range r.Objects {
		if o.Kind == "ConfigMap" {
			cm = &r.Objects[i]
		}
	}
	if cm == nil {
		t.Fatalf("no ConfigMap among the changes: %+v", r.Objects)
	}
	wantLines := "@@ -10,7 +10,7 @@\n [[teams.inference.windows]]\n from = \"20:00\"\n to = \"06:00\"\n-lendable = 6\n+lendable = 5\n \n [teams.research]\n guaranteed = 8\n"
	want := []FieldChange{{Path: "data[tenancy.toml]", Op: Changed,
		Old: string(windowsAgreement(6).Data), New: string(windowsAgreement(5).Data), Lines: wantLines}}
	if d := cmp.Diff(want, cm.Fields); d != "" {
		t.Errorf("fields (-want,+got):\n%s", d)
	}

	text := string(Text(r, false))
	wantText := "~ ConfigMap tenancy-system/tenancy-windows-gpu-pool (v1)\n" +
		"    data[tenancy.toml]: 1 line(s) removed, 1 added:\n" +
		"      @@ -10,7 +10,7 @@\n       [[teams.inference.windows]]\n       from = \"20:00\"\n       to = \"06:00\"\n" +
		"      -lendable = 6\n      +lendable = 5\n       \n       [teams.research]\n       guaranteed = 8\n"
	if !strings.Contains(text, wantText) {
		t.Errorf("text does not hold the agreement's diff:\n%s", text)
	}
	md := string(Markdown(r, 0))
	for name, out := range map[string]string{"text": text, "markdown": md} {
		if strings.Contains(out, `\n`) {
			t.Errorf("%s prints an escaped string:\n%s", name, out)
		}
		if n := strings.Count(out, "lendable = 5"); n != 1 {
			t.Errorf("%s prints the changed line %d times, want once:\n%s", name, n, out)
		}
	}
	js, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Objects []struct {
			Kind    string `json:"kind"`
			Unified string `json:"unified"`
			Fields  []struct {
				Old, New, Lines string
			} `json:"fields"`
		} `json:"objects"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	for _, o := range doc.Objects {
		if o.Kind == "ConfigMap" && (len(o.Fields) != 1 || o.Fields[0].Lines != wantLines || o.Fields[0].Old == "" || o.Unified == "") {
			t.Errorf("JSON ConfigMap = %+v, want old, new, lines and the YAML diff", o)
		}
	}
}

// digestLine is the Deployment's digest annotation as the render writes it.
var digestLine = regexp.MustCompile(`(?m)^\s*tenancy\.dev/agreement-sha256: (.*)$`)

// TestAnnotationQuotingIsStable: the digest annotation is quoted alike in
// every render, so a diff shows the digest change and never a change of
// quoting. A bare hex digest was written plain when it started with a
// letter and quoted when with a digit; the cases include both.
func TestAnnotationQuotingIsStable(t *testing.T) {
	firsts := map[bool]bool{} // whether the digest starts with a digit
	var written []string
	for lendable := 1; lendable <= 8; lendable++ {
		for _, o := range renderWindows(t, lendable).Objects {
			if o.Kind() != "Deployment" {
				continue
			}
			m := digestLine.FindSubmatch(o.YAML)
			if m == nil {
				t.Fatalf("no digest annotation in\n%s", o.YAML)
			}
			v := string(m[1])
			written = append(written, v)
			if !regexp.MustCompile(`^"sha256:[0-9a-f]{64}"$`).MatchString(v) {
				t.Errorf("lendable %d: digest written %s, want it double-quoted with its sha256: prefix", lendable, v)
			}
			if len(v) > 8 {
				c := v[8]
				firsts[c >= '0' && c <= '9'] = true
			}
		}
	}
	if !firsts[true] || !firsts[false] {
		t.Errorf("the digests %v do not start with both a digit and a letter: the test proves nothing", written)
	}
}
