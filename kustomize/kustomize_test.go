package kustomize

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/*/expected.yaml and errors.txt from the actual output")

// TestGolden runs the function on every directory under testdata, the layout
// of kyaml's frameworktestutil:
//
//	config.yaml    the TenancyGenerator; passed as functionConfig and, as
//	               kustomize does, as the only item marked local-config
//	input.yaml     optional further items
//	expected.yaml  the whole ResourceList written to stdout
//	errors.txt     present when the function must fail: each line is a
//	               regular expression the printed results must match
//
// The agreement files a case names sit in its directory, which is the
// function's working directory. Unlike frameworktestutil, the output is
// compared on failure too: a failing run must write results and no items.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no test cases under testdata")
	}
	for _, config := range dirs {
		dir := filepath.Dir(config)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := resourceList(t, dir)
			var out bytes.Buffer
			results, err := Run(dir, bytes.NewReader(in), &out)
			messages := resultMessages(results)

			expectedPath := filepath.Join(dir, "expected.yaml")
			errorsPath := filepath.Join(dir, "errors.txt")
			if *update {
				writeGolden(t, expectedPath, out.Bytes())
				if err != nil {
					writeGolden(t, errorsPath, []byte(regexpLines(messages)))
				} else if rmErr := os.Remove(errorsPath); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
					t.Fatal(rmErr)
				}
			}

			want, readErr := os.ReadFile(expectedPath)
			if readErr != nil {
				t.Fatal(readErr)
			}
			if diff := cmp.Diff(string(want), out.String()); diff != "" {
				t.Errorf("stdout differs from %s (-want,+got):\n%s", expectedPath, diff)
			}

			patterns, readErr := os.ReadFile(errorsPath)
			wantFailure := readErr == nil
			if readErr != nil && !errors.Is(readErr, os.ErrNotExist) {
				t.Fatal(readErr)
			}
			if wantFailure != (err != nil) {
				t.Fatalf("Run() error = %v, want failure: %v; results:\n%s", err, wantFailure, messages)
			}
			if wantFailure {
				assertItemsEmpty(t, out.Bytes())
				for _, p := range strings.Split(strings.TrimSpace(string(patterns)), "\n") {
					if !regexp.MustCompile(p).MatchString(messages) {
						t.Errorf("results do not match %q; results:\n%s", p, messages)
					}
				}
			}
		})
	}
}

// resourceList builds the ResourceList kustomize would send: the config as
// functionConfig and as the first item, marked local-config.
func resourceList(t *testing.T, dir string) []byte {
	t.Helper()
	config, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fnConfig, err := yaml.Parse(string(config))
	if err != nil {
		t.Fatal(err)
	}
	item := fnConfig.Copy()
	if err := item.PipeE(yaml.SetAnnotation("config.kubernetes.io/local-config", "true")); err != nil {
		t.Fatal(err)
	}
	items := []*yaml.RNode{item}
	if extra, err := os.ReadFile(filepath.Join(dir, "input.yaml")); err == nil {
		for _, doc := range strings.Split(string(extra), "\n---\n") {
			n, err := yaml.Parse(doc)
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, n)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	// Written the way kustomize writes a function's input.
	var b bytes.Buffer
	w := kio.ByteWriter{
		Writer:                &b,
		WrappingAPIVersion:    kio.ResourceListAPIVersion,
		WrappingKind:          kio.ResourceListKind,
		KeepReaderAnnotations: true,
		FunctionConfig:        fnConfig,
	}
	if err := w.Write(items); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func assertItemsEmpty(t *testing.T, out []byte) {
	t.Helper()
	rl, err := yaml.Parse(string(out))
	if err != nil {
		t.Fatalf("stdout is not YAML: %v\n%s", err, out)
	}
	if kind := yaml.GetValue(rl.Field("kind").Value); kind != "ResourceList" {
		t.Errorf("stdout kind = %q, want ResourceList", kind)
	}
	items := rl.Field("items")
	if items == nil {
		t.Fatalf("stdout has no items field:\n%s", out)
	}
	if n := len(items.Value.YNode().Content); n != 0 {
		t.Errorf("a failing run wrote %d items; it must write none", n)
	}
}

func resultMessages(rs framework.Results) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(string(r.Severity))
		b.WriteString(": ")
		b.WriteString(r.Message)
		b.WriteString("\n")
	}
	return b.String()
}

// regexpLines quotes each message so a freshly written errors.txt matches
// literally; edit it to a looser pattern where a message may change.
func regexpLines(messages string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(messages), "\n") {
		b.WriteString(regexp.QuoteMeta(line))
		b.WriteString("\n")
	}
	return b.String()
}

func writeGolden(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
