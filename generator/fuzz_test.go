package generator_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/examples"
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

// FuzzRender feeds arbitrary bytes through parse, validate and render for
// both backends and both Kueue APIs. It must never panic; an error must come
// with no result (the wrappers print nothing then); a success must be
// complete, consistent and byte-stable.
func FuzzRender(f *testing.F) {
	for _, src := range examples.Sources(f) {
		data := src.Data
		f.Add(data)
	}
	for _, s := range fuzzSnippets {
		f.Add([]byte(s))
	}
	f.Fuzz(checkRender)
}

// numbersTemplate is an agreement whose every count is a fuzzed number:
// two flavors of different resources, a team on one of them and a team on
// both, so the numbers meet in sums, limits and lending.
const numbersTemplate = `version = 1
name = "pool"
[flavors.h100]
capacity = %d
[flavors.mig]
resource = "nvidia.com/mig-1g.10gb"
capacity = %d
[priorities]
high = %d
[teams.a]
weight = %d
vms = %d
[teams.a.flavors.h100]
guaranteed = %d
lendable = %d
borrow = %d
[teams.b.flavors.h100]
guaranteed = %d
lendable = %d
borrow = %d
[teams.b.flavors.mig]
guaranteed = %d
borrow = %d
`

// FuzzRenderNumbers fuzzes the numbers of a well-formed agreement, which
// random bytes rarely reach: overflowing sums, negative and boundary
// counts. The properties are FuzzRender's, plus: no rendered quota, limit
// or weight is negative (KAI's -1, "unlimited", aside).
func FuzzRenderNumbers(f *testing.F) {
	f.Add(int64(32), int64(56), int64(1000), int64(1), int64(4), int64(16), int64(8), int64(8), int64(16), int64(0), int64(8), int64(28), int64(14))
	f.Add(int64(1), int64(1), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(1), int64(1), int64(0), int64(1), int64(0))
	f.Add(int64(1<<53), int64(1<<53), int64(2147483647), int64(1<<53), int64(1<<62), int64(1<<52), int64(1<<52), int64(1<<53), int64(1<<52), int64(1<<52), int64(1<<53), int64(1<<53), int64(1<<53))
	f.Add(int64(-1), int64(0), int64(-2147483649), int64(-1), int64(-1), int64(-1), int64(-1), int64(-1), int64(-9223372036854775808), int64(9223372036854775807), int64(-1), int64(9223372036854775807), int64(9223372036854775807))
	// A borrow near the int64 limit once overflowed KAI's guaranteed +
	// borrow into a negative queue limit.
	f.Add(int64(32), int64(56), int64(1), int64(1), int64(1), int64(16), int64(8), int64(math.MaxInt64), int64(16), int64(8), int64(8), int64(28), int64(14))
	f.Fuzz(func(t *testing.T, capH100, capMIG, priority, weight, vms, aG, aL, aB, bG, bL, bB, bMIGG, bMIGB int64) {
		data := fmt.Sprintf(numbersTemplate, capH100, capMIG, priority, weight, vms, aG, aL, aB, bG, bL, bB, bMIGG, bMIGB)
		checkRender(t, []byte(data))
		for _, opts := range fuzzOptions {
			res, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: []byte(data)}, opts)
			if err != nil {
				continue
			}
			for _, o := range res.Objects {
				if path, value, ok := negativeQuantity(o.Fields, o.Kind()); !ok {
					t.Fatalf("Render %+v: %s %s has %s = %v\n%s", opts, o.Kind(), o.Name(), path, value, data)
				}
			}
		}
	})
}

// quantityKeys name the fields that hold amounts of GPUs or shares.
var quantityKeys = map[string]bool{
	"quota": true, "limit": true, "overQuotaWeight": true, "weight": true,
	"nominalQuota": true, "lendingLimit": true, "borrowingLimit": true,
}

// negativeQuantity walks an object's fields and returns the first amount
// below zero; -1 is allowed, as KAI's "unlimited". ok is false when one is
// found.
func negativeQuantity(v any, path string) (string, any, bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if quantityKeys[k] {
				s := fmt.Sprint(child)
				if strings.HasPrefix(s, "-") && s != "-1" {
					return path + "." + k, child, false
				}
			}
			if p, val, ok := negativeQuantity(child, path+"."+k); !ok {
				return p, val, false
			}
		}
	case []any:
		for i, child := range v {
			if p, val, ok := negativeQuantity(child, fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, val, false
			}
		}
	}
	return "", nil, true
}

// checkRender is the property both fuzz targets check for one input.
func checkRender(t *testing.T, data []byte) {
	src := generator.Source{Path: "tenancy.toml", Data: data}
	clusters := []string{""}
	if names, err := generator.Parts(src); err == nil && len(names) > 0 {
		clusters = names
	}
	for _, cluster := range clusters {
		for _, opts := range fuzzOptions {
			opts.Cluster = cluster
			checkPart(t, src, opts)
		}
	}
}

// checkPart is checkRender's property for one part of the agreement and
// one set of options.
func checkPart(t *testing.T, src generator.Source, opts generator.Options) {
	{
		_, _, checkErr := generator.Check(src, opts)
		if errors.Is(checkErr, generator.ErrOptions) {
			// KAI asked for a fleet's manager: Render refuses it alike.
			if _, err := generator.Render(src, opts); !errors.Is(err, generator.ErrOptions) {
				t.Fatalf("Check %+v: %v; Render: %v", opts, checkErr, err)
			}
			return
		}
		checkAgreementError(t, "Check", checkErr)
		res, err := generator.Render(src, opts)
		if err != nil {
			if res != nil {
				t.Fatalf("Render %+v: a result alongside the error %v", opts, err)
			}
			checkAgreementError(t, "Render", err)
			return
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
				t.Fatalf("Render %+v: object %d (%s %s) has no YAML", opts, i, o.Kind(), o.Name())
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
