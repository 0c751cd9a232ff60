package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/internal/schematest"
)

// TestInitAgreementChecksAndRenders: what init writes is valid without a
// single warning, and renders for Kueue (both API versions) as written and
// for KAI once its backend key says kai, so a new user's first check,
// render and sync succeed.
func TestInitAgreementChecksAndRenders(t *testing.T) {
	const kueueKey = `backend = "kueue"`
	if !strings.Contains(string(initAgreement), "\n"+kueueKey+" ") {
		t.Fatalf("init.toml does not write %s", kueueKey)
	}
	forKAI := strings.Replace(string(initAgreement), kueueKey, `backend = "kai"  `, 1)
	for _, tc := range []struct {
		name string
		opts generator.Options
		data []byte
	}{
		{"kueue v1beta2", generator.Options{}, initAgreement},
		{"kueue v1beta1", generator.Options{KueueAPI: generator.KueueV1beta1}, initAgreement},
		{"kai", generator.Options{}, []byte(forKAI)},
	} {
		src, opts := generator.Source{Path: "tenancy.toml", Data: tc.data}, tc.opts
		t.Run(tc.name, func(t *testing.T) {
			_, warnings, err := generator.Check(src, opts)
			if err != nil || len(warnings) > 0 {
				t.Fatalf("Check: %v, warnings:\n%v", err, warnings)
			}
			res, err := generator.Render(src, opts)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if len(res.Manifests) == 0 || len(res.Warnings) > 0 {
				t.Errorf("Render: %d bytes, warnings %v", len(res.Manifests), res.Warnings)
			}
		})
	}
}

// commentedSetting is an optional setting the template shows commented out:
// "# key = value" or "# [table]" / "# [[array]]".
var commentedSetting = regexp.MustCompile(`^# (\[\[?[a-z0-9_.-]+\]\]?$|[a-z_]+ = )`)

// uncommented returns the template with every commented-out setting on, so
// that the keys shown only as examples are checked as the active ones are.
func uncommented(template string) string {
	lines := strings.Split(template, "\n")
	for i, l := range lines {
		if commentedSetting.MatchString(l) {
			lines[i] = strings.TrimPrefix(l, "# ")
		}
	}
	return strings.Join(lines, "\n")
}

// TestInitAgreementKeysAreTheFormats keeps the template in step with the
// format: with every example setting uncommented it is valid against the
// JSON Schema and has no key the decoder does not know; and every key of
// the tables a first agreement uses appears in it, so a key added to the
// format (and to the schema, which TestSchemaKeysMatchDecoder enforces)
// fails here until the template shows and explains it.
func TestInitAgreementKeysAreTheFormats(t *testing.T) {
	all := uncommented(string(initAgreement))
	if all == string(initAgreement) {
		t.Fatal("the template has no commented-out settings, or the pattern no longer matches them")
	}

	var doc map[string]any
	if err := toml.Unmarshal([]byte(all), &doc); err != nil {
		t.Fatalf("the template with its examples uncommented is not TOML: %v\n%s", err, all)
	}
	if err := schematest.Compile(t, agreement.Schema).Validate(schematest.TOMLAsJSON(t, all)); err != nil {
		t.Errorf("the template with its examples uncommented fails the JSON Schema: %v", err)
	}

	// CheckAll: uncommented, the template is a fleet, each part checked.
	_, _, err := generator.CheckAll(generator.Source{Path: "init.toml", Data: []byte(all)}, generator.Options{})
	var ae *generator.AgreementError
	if err != nil && !errors.As(err, &ae) {
		t.Fatal(err)
	}
	if ae != nil {
		for _, d := range ae.Diagnostics {
			if strings.HasPrefix(d.Message, "unknown key") {
				t.Errorf("the template shows a key the decoder does not know: %s", d)
			}
		}
	}

	// The keys each table shows, from the uncommented document.
	sub := func(m map[string]any, k string) map[string]any { v, _ := m[k].(map[string]any); return v }
	first := func(m map[string]any) map[string]any {
		for _, v := range m {
			if t, ok := v.(map[string]any); ok {
				return t
			}
		}
		return nil
	}
	shown := map[string]map[string]any{
		"root":       doc,
		"flavor":     first(sub(doc, "flavors")),
		"team":       mergedTeams(sub(doc, "teams")),
		"department": first(sub(doc, "departments")),
		"topology":   sub(doc, "topology"),
		"guardrail":  sub(doc, "guardrails"),
		"monitoring": sub(doc, "monitoring"),
		"component":  sub(doc, "components"),
		"kai":        sub(doc, "kai"),
		"window":     firstWindow(sub(doc, "teams")),
	}
	keys := agreement.TableKeys()
	for table, m := range shown {
		for _, k := range keys[table] {
			if _, ok := m[k]; !ok {
				if k == "flavors" && strings.Contains(string(initAgreement), "flavors") {
					// A team's, department's or window's flavors
					// replace its quota keys: a one-flavor template
					// cannot set both, so the comments say it.
					continue
				}
				t.Errorf("init.toml shows no %s key %q: add it (commented out, with a comment saying what it does)", table, k)
			}
		}
	}
}

// mergedTeams is the union of the keys the template's teams show.
func mergedTeams(teams map[string]any) map[string]any {
	out := map[string]any{}
	for _, v := range teams {
		for k, x := range v.(map[string]any) {
			out[k] = x
		}
	}
	return out
}

func firstWindow(teams map[string]any) map[string]any {
	for _, v := range teams {
		if ws, ok := v.(map[string]any)["windows"].([]any); ok && len(ws) > 0 {
			return ws[0].(map[string]any)
		}
	}
	return nil
}

// TestInitAgreementExplainsEveryKey: the first time the template sets a key
// of the format, active or commented out, a comment on its line or just
// above it (above its table's header) says what it does, so the file reads
// without the README. Later teams' keys, and names the user chooses
// (priorities), are introduced by the comment above their table.
func TestInitAgreementExplainsEveryKey(t *testing.T) {
	formatKeys := map[string]bool{}
	for _, keys := range agreement.TableKeys() {
		for _, k := range keys {
			formatKeys[k] = true
		}
	}
	lines := strings.Split(uncommented(string(initAgreement)), "\n")
	setting := regexp.MustCompile(`^([a-z_]+) = `)
	header := regexp.MustCompile(`^\[`)
	seen := map[string]bool{}
	for i, l := range lines {
		m := setting.FindStringSubmatch(l)
		if m == nil || strings.Contains(l, " # ") {
			if m != nil {
				seen[m[1]] = true
			}
			continue
		}
		key := m[1]
		j := i - 1
		if formatKeys[key] && !seen[key] {
			// Its own comment: the line above, past a table header.
			for j >= 0 && header.MatchString(lines[j]) {
				j--
			}
		} else {
			// Its group's comment: above the settings and headers
			// of the same group.
			for j >= 0 && (setting.MatchString(lines[j]) || header.MatchString(lines[j])) {
				j--
			}
		}
		seen[key] = true
		if j < 0 || !strings.HasPrefix(lines[j], "#") {
			t.Errorf("init.toml:%d: %q has no comment saying what it does", i+1, key)
		}
	}
}

// TestInit: init writes the template to FILE and says what to do next; it
// never overwrites an existing file without --force; - prints it on stdout
// with nothing on stderr.
func TestInit(t *testing.T) {
	const other = "version = 1 # mine\n"
	tests := map[string]struct {
		files      map[string]string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
		file       string // the file to read afterwards
		wantFile   string
	}{
		"default file": {
			args:       []string{"init"},
			wantStderr: "tenancy init: wrote tenancy.toml; edit it, then run 'tenancy check'\n",
			file:       "tenancy.toml", wantFile: string(initAgreement),
		},
		"named file": {
			args:       []string{"init", "prod.toml"},
			wantStderr: "tenancy init: wrote prod.toml; edit it, then run 'tenancy check prod.toml'\n",
			file:       "prod.toml", wantFile: string(initAgreement),
		},
		"stdout": {
			args:       []string{"init", "-"},
			wantStdout: string(initAgreement),
		},
		"an existing file is left alone": {
			files:      map[string]string{"tenancy.toml": other},
			args:       []string{"init"},
			wantCode:   exitFailure,
			wantStderr: "tenancy init: tenancy.toml already exists: left alone (--force replaces it)\n",
			file:       "tenancy.toml", wantFile: other,
		},
		"--force replaces it": {
			files:      map[string]string{"tenancy.toml": other},
			args:       []string{"init", "--force"},
			wantStderr: "tenancy init: wrote tenancy.toml; edit it, then run 'tenancy check'\n",
			file:       "tenancy.toml", wantFile: string(initAgreement),
		},
		"a directory that does not exist": {
			args:       []string{"init", "clusters/prod/tenancy.toml"},
			wantCode:   exitFailure,
			wantStderr: "tenancy init: open clusters/prod/tenancy.toml: no such file or directory\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir, stdout, stderr, code := runInTempDir(t, tc.files, tc.args...)
			wantRun(t, outcome{code, stdout, stderr}, outcome{tc.wantCode, tc.wantStdout, tc.wantStderr})
			if tc.file != "" {
				got, err := os.ReadFile(filepath.Join(dir, tc.file))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.wantFile, string(got)); diff != "" {
					t.Errorf("%s (-want,+got):\n%s", tc.file, diff)
				}
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".tenancy-init-") {
					t.Errorf("a temporary file is left behind: %s", e.Name())
				}
			}
		})
	}
}

// TestInitThenCheck: the first session of a new user, in order: check
// without an agreement points at init, init writes one, check accepts it.
func TestInitThenCheck(t *testing.T) {
	dir := t.TempDir()
	for _, cmd := range []string{"check", "render", "explain"} {
		stdout, stderr, code := runIn(dir, cmd)
		if code != exitFailure || stdout != "" || !strings.Contains(stderr, "'tenancy init' writes a commented one to start from") {
			t.Errorf("%s without tenancy.toml: exit %d, stdout %q, stderr %q; want 1, nothing, and a pointer to init", cmd, code, stdout, stderr)
		}
	}
	_, stderr, code := runIn(dir, "diff", "old.toml", "new.toml")
	if code == exitOK || !strings.Contains(stderr, "'tenancy init old.toml' writes a commented one") {
		t.Errorf("diff of missing files: exit %d, stderr %q; want a pointer to init", code, stderr)
	}
	if _, stderr, code := runIn(dir, "init"); code != exitOK {
		t.Fatalf("init: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runIn(dir, "check"); code != exitOK || stderr != "tenancy.toml: valid\n" {
		t.Errorf("check after init: exit %d, stderr %q; want 0 and valid without a warning", code, stderr)
	}
	// The template says it is for Kueue: KAI is refused at that key.
	if _, stderr, code := runIn(dir, "check", "--backend", "kai"); code != exitFailure || !strings.Contains(stderr, "tenancy.toml:16:11: backend: ") {
		t.Errorf("check --backend kai after init: exit %d, stderr %q; want 1 and the refusal at the backend key", code, stderr)
	}
	if !slices.ContainsFunc(commands, func(c command) bool { return c.name == "init" }) {
		t.Error("init is not in the command list")
	}
}
