package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCIExampleCommandsRun runs every tenancy check command of the CI
// examples (examples/ci) on the agreement init writes, so a flag the example
// uses cannot be renamed or dropped without the example failing here.
func TestCIExampleCommandsRun(t *testing.T) {
	files, err := filepath.Glob("../../examples/ci/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CI examples: %v", err)
	}
	command := regexp.MustCompile(`tenancy check[^>|\n]*`)
	ran := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range command.FindAllString(string(data), -1) {
			line := strings.NewReplacer(`"${AGREEMENT}"`, "tenancy.toml", "${AGREEMENT}", "tenancy.toml").Replace(m)
			args := strings.Fields(line)[1:]
			_, _, stderr, code := runInTempDir(t, map[string]string{"tenancy.toml": string(initAgreement)}, args...)
			if code != exitOK {
				t.Errorf("%s: %q: exit %d\n%s", filepath.Base(f), line, code, stderr)
			}
			ran++
		}
	}
	if ran < 2 {
		t.Errorf("ran %d commands of examples/ci, want the github and the sarif one at least", ran)
	}
}
