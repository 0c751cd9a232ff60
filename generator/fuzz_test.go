package generator_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/tenancy-dev/tenancy/generator"
)

// fuzzOptions are the renderings every fuzzed agreement goes through.
var fuzzOptions = []generator.Options{
	{Backend: generator.Kueue, KueueAPI: generator.KueueV1beta2},
	{Backend: generator.Kueue, KueueAPI: generator.KueueV1beta1},
	{Backend: generator.KAI},
}

// fuzzSnippets are invalid or unusual agreements that lead the fuzzer into
// the error paths: syntax errors, duplicate tables, wrong types, huge
// numbers, topology and tolerations.
var fuzzSnippets = []string{
	"",
	"version = 1\n[flavors.h100\n",
	"version = 1\nname = \"p\"\nname = \"q\"\n[flavors.h100]\ncapacity = 1\n[flavors.h100]\n",
	"version = \"1\"\nname = {a = 1}\n[flavors.h100]\ncapacity = 8.5\n[teams.a]\nlendible = 1\nnamespaces = []\n",
	"version = 1\nname = \"p\"\n[flavors.h100]\ncapacity = 9223372036854775807\n[teams.a]\nguaranteed = 9223372036854775807\nborrow = 9223372036854775807\n[teams.b]\nguaranteed = 9223372036854775807\n",
	"version = 1\nname = \"p\"\n[flavors.a]\ncapacity = 8\n[flavors.b]\ncapacity = 8\n[teams.t]\nguaranteed = 1\n[teams.t.flavors.c]\nborrow = 1\n",
	"version = 1\nname = \"p\"\n[topology]\nlevels = [\"a/b\", \"a/b\", [\"c\"]]\n[flavors.h100]\ncapacity = 8\nnode_labels = { \"a/b\" = \"c\" }\ntolerations = [{ operator = \"Exists\", value = \"x\" }, { key = \"k\", effect = \"NoExecute\" }]\n[teams.a]\nguaranteed = 8\n",
	"version = 1\nname = \"p\"\n[priorities]\nhigh = 2147483648\nlow = -1\n[flavors.h100]\ncapacity = 8\n[teams.p]\n[teams.p-reserved]\n[teams.kube-system]\n",
	"version = 1\nname = \"p\"\n[flavors.h100]\ncapacity = 8\n[[teams]]\n[teams.a.flavors.h100]\nguaranteed = 1\n",
	"version = 1\nname = \"p\"\n[flavors.h100]\ncapacity = 8\n[teams.a]\nnamespaces = [\"x\", \"x\"]\nvms = 0\nweight = 0\nreclaim = \"wait\"\n",
	// Valid edge cases, so mutations reach the renderers: zero weights and
	// VM counts, a team with no quota, MIG resources, every toleration
	// field, a quoted name, and guarantees that fill the capacity exactly.
	"version = 1\nname = \"p\"\n[flavors.h100]\ncapacity = 8\n[teams.a]\nnamespaces = [\"x\", \"y\"]\nvms = 0\nweight = 0\nreclaim = \"wait\"\nguaranteed = 8\nlendable = 8\n[teams.\"b\"]\nborrow = 8\n",
	"version = 1\nname = \"p\"\n[topology]\nlevels = [\"r\", \"kubernetes.io/hostname\"]\n[flavors.m]\nresource = \"nvidia.com/mig-1g.10gb\"\ncapacity = 7\nnode_labels = { \"n/m\" = \"\" }\ntolerations = [{ key = \"k\", operator = \"Equal\", value = \"v\", effect = \"PreferNoSchedule\" }, { operator = \"Exists\" }]\n[flavors.g]\ncapacity = 1\nnode_labels = { g = \"1\" }\n[priorities]\nmax = 2147483647\nmin = -2147483648\n[teams.a.flavors.m]\nguaranteed = 7\nlendable = 3\nborrow = 0\n[teams.b.flavors.g]\nguaranteed = 1\nborrow = 7\n[teams.c]\n",
}

// fuzzSeedFiles returns the reference agreement and every tenancy.toml
// under examples/.
func fuzzSeedFiles(f *testing.F) [][]byte {
	paths := []string{"../tenancy.toml"}
	err := filepath.WalkDir("../examples", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "tenancy.toml" {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, data)
	}
	if len(out) < 4 {
		f.Fatalf("found %d seed agreements, want the reference one and the examples", len(out))
	}
	return out
}

// FuzzRender feeds arbitrary bytes through parse, validate and render for
// both backends and both Kueue APIs. It must never panic; an error must come
// with no result (the wrappers print nothing then); a success must be
// complete, consistent and byte-stable.
func FuzzRender(f *testing.F) {
	for _, data := range fuzzSeedFiles(f) {
		f.Add(data)
	}
	for _, s := range fuzzSnippets {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := generator.Source{Path: "tenancy.toml", Data: data}
		_, _, checkErr := generator.Check(src)
		checkAgreementError(t, "Check", checkErr)
		for _, opts := range fuzzOptions {
			res, err := generator.Render(src, opts)
			if err != nil {
				if res != nil {
					t.Fatalf("Render %+v: a result alongside the error %v", opts, err)
				}
				checkAgreementError(t, "Render", err)
				continue
			}
			if res == nil {
				t.Fatalf("Render %+v: nil result and nil error", opts)
			}
			if checkErr != nil {
				t.Fatalf("Render %+v succeeded but Check failed: %v", opts, checkErr)
			}
			if len(res.Manifests) == 0 || len(res.Objects) == 0 {
				t.Fatalf("Render %+v: empty output without an error", opts)
			}
			yamls := make([][]byte, len(res.Objects))
			for i, o := range res.Objects {
				if len(o.YAML) == 0 {
					t.Fatalf("Render %+v: object %d (%s %s) has no YAML", opts, i, o.Kind, o.Name)
				}
				yamls[i] = o.YAML
			}
			if joined := bytes.Join(yamls, []byte("---\n")); !bytes.Equal(joined, res.Manifests) {
				t.Fatalf("Render %+v: Manifests differ from the objects' YAML joined by ---", opts)
			}
			again, err := generator.Render(src, opts)
			if err != nil {
				t.Fatalf("Render %+v: second render failed: %v", opts, err)
			}
			if !bytes.Equal(again.Manifests, res.Manifests) {
				t.Fatalf("Render %+v: second render differs", opts)
			}
		}
	})
}

// checkAgreementError requires a failure to be an *AgreementError with at
// least one error, each naming the file: a plain error for bytes a user
// wrote means a step failed to validate what it relied on.
func checkAgreementError(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ae *generator.AgreementError
	if !errors.As(err, &ae) {
		t.Fatalf("%s: error is not an *AgreementError: %v", what, err)
	}
	if len(ae.Diagnostics.Errors()) == 0 {
		t.Fatalf("%s: *AgreementError without errors: %v", what, ae.Diagnostics)
	}
	for _, d := range ae.Diagnostics {
		if d.File != "tenancy.toml" {
			t.Fatalf("%s: diagnostic without the file name: %q", what, d.String())
		}
	}
}
