package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/diag"
)

// outputAgreement has errors on lines with non-ASCII text before the key,
// so a byte column and a character column differ; line numbers matter.
const outputAgreement = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 8
[teams.training]
namespaces = ["é", "BAD,x"]
guaranteed = 16
lendable = 20
[teams.research]
weight = -1
`

// TestCheckOutputGitHub: one workflow command per diagnostic, in the text
// output's order, at its file, line and character column, escaped; the
// verdict on stderr and the exit status as with text.
func TestCheckOutputGitHub(t *testing.T) {
	tests := map[string]struct {
		agreement  string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		"invalid: every error at its line and column": {
			agreement: outputAgreement,
			args:      []string{"check", "--output", "github", "./tenancy.toml"},
			wantCode:  exitFailure,
			wantStdout: `::error file=tenancy.toml,line=4,col=12,title=tenancy check::flavors.h100.capacity: teams are guaranteed 16 GPUs of flavor h100 (training 16) but its capacity is 8
::error file=tenancy.toml,line=6,col=15,title=tenancy check::teams.training.namespaces[0]: "é" is not a valid name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')
::error file=tenancy.toml,line=6,col=20,title=tenancy check::teams.training.namespaces[1]: "BAD,x" is not a valid name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')
::error file=tenancy.toml,line=8,col=12,title=tenancy check::teams.training.lendable: lendable (20) exceeds guaranteed (16): a team can only lend GPUs it is guaranteed
::error file=tenancy.toml,line=10,col=10,title=tenancy check::teams.research.weight: must not be negative, got -1
`,
			wantStderr: "tenancy: ./tenancy.toml is invalid: 5 error(s)\n",
		},
		"valid with warnings: ::warning, exit 0": {
			agreement:  warningAgreement,
			args:       []string{"check", "--output=github", "--backend", "kueue"},
			wantStdout: "::warning file=tenancy.toml,line=7,col=10,title=tenancy check::teams.training.borrow: borrow (8) exceeds the 0 GPUs of flavor h100 the other teams can lend: at most 0 can ever be borrowed\n",
			wantStderr: "tenancy.toml: valid\n",
		},
		"valid without a warning: nothing on stdout": {
			agreement:  string(initAgreement),
			args:       []string{"check", "--output", "github"},
			wantStderr: "tenancy.toml: valid\n",
		},
		"a missing file is no verdict: nothing on stdout": {
			agreement:  string(initAgreement),
			args:       []string{"check", "--output", "github", "missing.toml"},
			wantCode:   exitFailure,
			wantStderr: "tenancy: open missing.toml: no such file or directory (no agreement yet? 'tenancy init missing.toml' writes a commented one to start from)\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stdout, stderr, code := runInTempDir(t, map[string]string{"tenancy.toml": tc.agreement}, tc.args...)
			wantRun(t, outcome{code, stdout, stderr}, outcome{tc.wantCode, tc.wantStdout, tc.wantStderr})
		})
	}
}

// TestCheckOutputGitHubStdin: an agreement on stdin has no file to
// annotate; the line and column are still given.
func TestCheckOutputGitHubStdin(t *testing.T) {
	stdout, _, code := runWithStdin(t.TempDir(), strings.NewReader(typoAgreement), "check", "--output", "github", "-")
	want := "::error line=7,col=1,title=tenancy check::teams.training.lendible: unknown key \"lendible\" (did you mean \"lendable\"?)\n"
	if code != exitFailure {
		t.Errorf("exit %d, want 1", code)
	}
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout (-want,+got):\n%s", diff)
	}
}

// TestGitHubEscapes: GitHub's rules (@actions/core toolkit): % and line
// breaks in messages, and also : and , in properties.
func TestGitHubEscapes(t *testing.T) {
	tests := map[string]struct{ in, data, property string }{
		"plain":        {"teams.a: ok", "teams.a: ok", "teams.a%3A ok"},
		"percent":      {"100% of 8", "100%25 of 8", "100%25 of 8"},
		"line breaks":  {"a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac"},
		"separators":   {"a,b::c", "a,b::c", "a%2Cb%3A%3Ac"},
		"an escape":    {"%0A", "%250A", "%250A"},
		"a file path":  {"clusters/a,b/tenancy.toml", "clusters/a,b/tenancy.toml", "clusters/a%2Cb/tenancy.toml"},
		"non-ASCII ok": {"é", "é", "é"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := escapeData(tc.in); got != tc.data {
				t.Errorf("escapeData(%q) = %q, want %q", tc.in, got, tc.data)
			}
			if got := escapeProperty(tc.in); got != tc.property {
				t.Errorf("escapeProperty(%q) = %q, want %q", tc.in, got, tc.property)
			}
		})
	}
}

// sarifLog is the part of a SARIF 2.1.0 log the tests read.
type sarifLog struct {
	Version string `json:"version"`
	Schema  string `json:"$schema"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID string `json:"id"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		ColumnKind string `json:"columnKind"`
		Results    []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine   int `json:"startLine"`
						StartColumn int `json:"startColumn"`
					} `json:"region"`
				} `json:"physicalLocation"`
				LogicalLocations []struct {
					FullyQualifiedName string `json:"fullyQualifiedName"`
				} `json:"logicalLocations"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

// TestCheckOutputSARIF: a SARIF 2.1.0 log of one run by tenancy, with a
// rule per diagnostic type; each result is at the text output's line and
// character column, with its field as the logical location. stderr is the
// text output itself.
func TestCheckOutputSARIF(t *testing.T) {
	files := map[string]string{"tenancy.toml": outputAgreement}
	_, _, text, _ := runInTempDir(t, files, "check")
	_, stdout, stderr, code := runInTempDir(t, files, "check", "--output", "sarif")
	if code != exitFailure {
		t.Errorf("exit %d, want 1", code)
	}
	if diff := cmp.Diff(text, stderr); diff != "" {
		t.Errorf("stderr differs from the text output (-text,+sarif):\n%s", diff)
	}
	var log sarifLog
	if err := json.Unmarshal([]byte(stdout), &log); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if log.Version != "2.1.0" || !strings.Contains(log.Schema, "sarif-schema-2.1.0.json") || len(log.Runs) != 1 {
		t.Fatalf("version %q, $schema %q, %d runs; want 2.1.0, the 2.1.0 schema, one run", log.Version, log.Schema, len(log.Runs))
	}
	run := log.Runs[0]
	if run.Tool.Driver.Name != "tenancy" || run.ColumnKind != "unicodeCodePoints" {
		t.Errorf("driver %q, columnKind %q", run.Tool.Driver.Name, run.ColumnKind)
	}
	var rules []string
	for _, r := range run.Tool.Driver.Rules {
		rules = append(rules, r.ID)
	}
	wantRules := []string{"FieldValueInvalid", "FieldValueRequired", "FieldValueNotSupported", "FieldValueDuplicate",
		"FieldValueForbidden", "FieldValueTypeInvalid", "FieldValueTooLong", "FieldValueTooMany", "FieldValueNotFound", "InternalError"}
	if diff := cmp.Diff(wantRules, rules); diff != "" {
		t.Errorf("rules (-want,+got):\n%s", diff)
	}

	// What the text output says, as file, line, byte column and message.
	type result struct {
		File, Field, Message, Level, Rule string
		Line, Column                      int
	}
	line := regexp.MustCompile(`^([^:]+):(\d+):(\d+): (?:(warning): )?([^:]+): (.*)$`)
	var want []result
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		if m[5] == "teams.training.namespaces[1]" {
			col-- // é is two bytes and one character
		}
		level := "error"
		if m[4] != "" {
			level = "warning"
		}
		want = append(want, result{File: m[1], Line: n, Column: col, Level: level, Field: m[5], Message: m[5] + ": " + m[6], Rule: "FieldValueInvalid"})
	}
	if len(want) != 5 {
		t.Fatalf("the text output has %d located lines, want 5:\n%s", len(want), text)
	}
	var got []result
	for _, r := range run.Results {
		if len(r.Locations) != 1 || len(r.Locations[0].LogicalLocations) != 1 {
			t.Fatalf("result %q has %d locations", r.Message.Text, len(r.Locations))
		}
		loc := r.Locations[0]
		if rules[r.RuleIndex] != r.RuleID {
			t.Errorf("result %q: ruleIndex %d is %s, not its ruleId %s", r.Message.Text, r.RuleIndex, rules[r.RuleIndex], r.RuleID)
		}
		got = append(got, result{
			File: loc.PhysicalLocation.ArtifactLocation.URI, Line: loc.PhysicalLocation.Region.StartLine,
			Column: loc.PhysicalLocation.Region.StartColumn, Level: r.Level, Rule: r.RuleID,
			Field: loc.LogicalLocations[0].FullyQualifiedName, Message: r.Message.Text,
		})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-text output,+sarif):\n%s", diff)
	}

	// Byte-identical on every run.
	_, again, _, _ := runInTempDir(t, files, "check", "--output", "sarif")
	if again != stdout {
		t.Error("two runs wrote different SARIF")
	}
}

// TestCheckOutputSARIFWarnings: a valid agreement's warnings are results of
// level warning, and the run still exits 0.
func TestCheckOutputSARIFWarnings(t *testing.T) {
	_, stdout, stderr, code := runInTempDir(t, map[string]string{"tenancy.toml": warningAgreement}, "check", "--output", "sarif", "--backend", "kueue")
	if code != exitOK || !strings.HasSuffix(stderr, "tenancy.toml: valid\n") {
		t.Errorf("exit %d, stderr %q; want 0 and valid", code, stderr)
	}
	var log sarifLog
	if err := json.Unmarshal([]byte(stdout), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 || len(log.Runs[0].Results) != 1 || log.Runs[0].Results[0].Level != "warning" {
		t.Errorf("want one run with one warning result:\n%s", stdout)
	}
}

func TestCharacterColumns(t *testing.T) {
	c := columns{data: []byte("a = 1\nb = [\"é\", \"x\"]\n\nz")}
	tests := map[string]struct{ line, col, want int }{
		"ASCII line":          {1, 5, 5},
		"after a two-byte é":  {2, 12, 11},
		"before the é":        {2, 6, 6},
		"an empty line":       {3, 1, 1},
		"last line, no break": {4, 1, 1},
		"no column":           {2, 0, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := c.of(posAt(tc.line, tc.col)); got != tc.want {
				t.Errorf("of(%d:%d) = %d, want %d", tc.line, tc.col, got, tc.want)
			}
		})
	}
}

func posAt(line, col int) diag.Pos { return diag.Pos{Line: line, Column: col} }
