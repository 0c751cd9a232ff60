package agreement_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/internal/schematest"
)

// schemaDoc is agreement.Schema decoded, for walking.
func schemaDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(agreement.Schema, &doc); err != nil {
		t.Fatalf("tenancy.schema.json is not JSON: %v", err)
	}
	return doc
}

// resolve follows a local "#/definitions/NAME" reference.
func resolve(t *testing.T, root, s map[string]any) map[string]any {
	t.Helper()
	ref, ok := s["$ref"].(string)
	if !ok {
		return s
	}
	name, ok := strings.CutPrefix(ref, "#/definitions/")
	if !ok {
		t.Fatalf("unexpected $ref %q", ref)
	}
	def, ok := root["definitions"].(map[string]any)[name].(map[string]any)
	if !ok {
		t.Fatalf("$ref %q resolves to nothing", ref)
	}
	return resolve(t, root, def)
}

// child returns s[keys[0]][keys[1]]..., resolving references on the way.
func child(t *testing.T, root, s map[string]any, keys ...string) map[string]any {
	t.Helper()
	for _, k := range keys {
		next, ok := s[k].(map[string]any)
		if !ok {
			t.Fatalf("schema has no %q under %v", k, keys)
		}
		s = resolve(t, root, next)
	}
	return s
}

// onlyPattern returns the one schema of a map's patternProperties.
func onlyPattern(t *testing.T, root, s map[string]any) map[string]any {
	t.Helper()
	pp, _ := s["patternProperties"].(map[string]any)
	if len(pp) != 1 {
		t.Fatalf("want one patternProperties entry, got %d", len(pp))
	}
	for _, v := range pp {
		return resolve(t, root, v.(map[string]any))
	}
	return nil
}

// TestSchemaKeysMatchDecoder holds the schema to the keys the decoder reads:
// a key added to the format but not to the schema (or the reverse) fails.
func TestSchemaKeysMatchDecoder(t *testing.T) {
	root := schemaDoc(t)
	flavor := onlyPattern(t, root, child(t, root, root, "properties", "flavors"))
	team := onlyPattern(t, root, child(t, root, root, "properties", "teams"))
	tables := map[string]map[string]any{
		"root":         root,
		"flavor":       flavor,
		"toleration":   child(t, root, flavor, "properties", "tolerations", "items"),
		"team":         team,
		"department":   onlyPattern(t, root, child(t, root, root, "properties", "departments")),
		"quota":        onlyPattern(t, root, child(t, root, team, "properties", "flavors")),
		"topology":     child(t, root, root, "properties", "topology"),
		"priority":     child(t, root, root, "definitions", "priorityTable"),
		"guardrail":    child(t, root, root, "properties", "guardrails"),
		"monitoring":   child(t, root, root, "properties", "monitoring"),
		"component":    child(t, root, root, "properties", "components"),
		"window":       child(t, root, team, "properties", "windows", "items"),
		"windowQuota":  onlyPattern(t, root, child(t, root, team, "properties", "windows", "items", "properties", "flavors")),
		"cluster":      onlyPattern(t, root, child(t, root, root, "properties", "clusters")),
		"clusterShare": child(t, root, root, "definitions", "clusterShare"),
		"kai":          child(t, root, root, "properties", "kai"),
	}
	decoder := agreement.TableKeys()
	var names []string
	for name := range decoder {
		names = append(names, name)
	}
	sort.Strings(names)
	if d := cmp.Diff(names, sortedKeys(tables)); d != "" {
		t.Fatalf("tables of the decoder vs. tables this test checks (-want,+got):\n%s", d)
	}
	for name, s := range tables {
		t.Run(name, func(t *testing.T) {
			want := append([]string(nil), decoder[name]...)
			sort.Strings(want)
			props, _ := s["properties"].(map[string]any)
			if d := cmp.Diff(want, sortedKeys(props)); d != "" {
				t.Errorf("keys of the %s table: decoder vs. schema (-want,+got):\n%s", name, d)
			}
			// The decoder rejects unknown keys, so the schema must too:
			// an editor should flag lendible as the tool will.
			if s["additionalProperties"] != false {
				t.Errorf("the %s table must set additionalProperties: false", name)
			}
		})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestSchemaDescribesEveryKey: editors show descriptions as hover text, so
// every key a person can write has one.
func TestSchemaDescribesEveryKey(t *testing.T) {
	root := schemaDoc(t)
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		for key, v := range s {
			sub, ok := v.(map[string]any)
			if !ok {
				continue
			}
			switch key {
			case "properties":
				for name, p := range sub {
					p := resolve(t, root, p.(map[string]any))
					if desc, _ := p["description"].(string); strings.TrimSpace(desc) == "" {
						t.Errorf("%s.%s has no description", path, name)
					}
					walk(path+"."+name, p)
				}
			case "patternProperties", "definitions":
				for name, p := range sub {
					walk(path+"["+name+"]", p.(map[string]any))
				}
			case "additionalProperties", "items":
				walk(path, sub)
				// if/then/else, not and dependencies only constrain keys
				// documented where they are declared.
			}
		}
	}
	walk("", root)
}

// agreementFiles lists the reference agreement and every example.
func agreementFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../../tenancy.toml"}
	err := filepath.WalkDir("../../examples", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == "testdata" && d.IsDir() {
			return filepath.SkipDir
		}
		if d.Name() == "tenancy.toml" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("found only %v: the examples moved?", files)
	}
	return files
}

func TestSchemaAcceptsExamples(t *testing.T) {
	sch := schematest.Compile(t, agreement.Schema)
	for _, path := range agreementFiles(t) {
		t.Run(path, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(schematest.TOMLAsJSON(t, string(src))); err != nil {
				t.Errorf("%s does not match tenancy.schema.json:\n%v", path, err)
			}
		})
	}
}

// leafLocations returns where in the document each innermost schema error
// points, as "teams/training/lendible"-style paths.
func leafLocations(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{"not a validation error: " + err.Error()}
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, strings.Join(e.InstanceLocation, "/"))
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

const header = "version = 1\nname = \"gpu-pool\"\n[flavors.h100]\ncapacity = 32\n"

// schemaCase is an agreement and what the schema and generator.Check make of it.
type schemaCase struct {
	doc      string
	schemaOK bool
	checkOK  bool
	at       string // where the schema reports the problem
}

// schemaCases are run through both the schema and generator.Check. Where they
// are meant to agree, schemaOK == checkOK; the cases where they differ record
// what a schema cannot say, so an editor is never stricter than the tool.
func schemaCases() map[string]schemaCase {
	return map[string]schemaCase{
		"reference shorthand": {
			doc:      header + "[teams.training]\nguaranteed = 16\nlendable = 8\nborrow = 8\nreclaim = \"wait\"\nweight = 2\nvms = 0\n",
			schemaOK: true, checkOK: true,
		},
		"multi-flavor with tolerations, labels, topology and priorities": {
			doc: `version = 1
name = "gpu-pool"
[topology]
levels = ["cloud.example.com/rack", "kubernetes.io/hostname"]
[flavors.h100]
capacity = 8
node_labels = { "nvidia.com/gpu.product" = "NVIDIA-H100-80GB-HBM3" }
tolerations = [{ operator = "Exists" }, { key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }]
[flavors.mig]
resource = "nvidia.com/mig-1g.10gb"
capacity = 14
node_labels = { "nvidia.com/mig.config" = "all-1g.10gb" }
[priorities]
critical = 2147483647
background = -2147483648
[teams.a]
namespaces = ["a", "a-dev"]
[teams.a.flavors.h100]
guaranteed = 8
[teams.a.flavors.mig]
borrow = 2
`,
			schemaOK: true, checkOK: true,
		},
		"backend named": {
			doc:      "backend = \"kai\"\n" + header + "[teams.a]\nguaranteed = 1\n",
			schemaOK: true, checkOK: true,
		},
		"both backends named": {
			doc:      "backend = [\"kueue\", \"kai\"]\n" + header + "[teams.a]\nguaranteed = 1\n",
			schemaOK: true, checkOK: true,
		},
		"unknown backend": {
			doc:      "backend = \"volcano\"\n" + header + "[teams.a]\nguaranteed = 1\n",
			schemaOK: false, checkOK: false, at: "backend",
		},
		"no backend in the list": {
			doc:      "backend = []\n" + header + "[teams.a]\nguaranteed = 1\n",
			schemaOK: false, checkOK: false, at: "backend",
		},
		"backend named twice": {
			doc:      "backend = [\"kai\", \"kai\"]\n" + header + "[teams.a]\nguaranteed = 1\n",
			schemaOK: false, checkOK: false, at: "backend",
		},
		"typo in a team key": {
			doc:      header + "[teams.training]\nguaranteed = 16\nlendible = 8\n",
			schemaOK: false, checkOK: false, at: "teams/training",
		},
		"typo in a top-level key": {
			doc:      "nmae = \"x\"\n" + header + "[teams.a]\nguaranteed = 1\n",
			schemaOK: false, checkOK: false, at: "",
		},
		"negative guaranteed": {
			doc:      header + "[teams.training]\nguaranteed = -1\n",
			schemaOK: false, checkOK: false, at: "teams/training/guaranteed",
		},
		"negative borrow under flavors": {
			doc:      header + "[teams.a.flavors.h100]\nguaranteed = 1\nborrow = -2\n",
			schemaOK: false, checkOK: false, at: "teams/a/flavors/h100/borrow",
		},
		"bad reclaim": {
			doc:      header + "[teams.training]\nguaranteed = 1\nreclaim = \"later\"\n",
			schemaOK: false, checkOK: false, at: "teams/training/reclaim",
		},
		"version 2": {
			doc:      strings.Replace(header, "version = 1", "version = 2", 1) + "[teams.a]\nguaranteed = 1\n",
			schemaOK: false, checkOK: false, at: "version",
		},
		"version as a string": {
			doc:      strings.Replace(header, "version = 1", "version = \"1\"", 1) + "[teams.a]\nguaranteed = 1\n",
			schemaOK: false, checkOK: false, at: "version",
		},
		"no name": {
			doc:      strings.Replace(header, "name = \"gpu-pool\"\n", "", 1) + "[teams.a]\nguaranteed = 1\n",
			schemaOK: false, checkOK: false, at: "",
		},
		"pool name not a DNS label": {
			doc:      strings.Replace(header, "gpu-pool", "GPU_Pool", 1) + "[teams.a]\nguaranteed = 1\n",
			schemaOK: false, checkOK: false, at: "name",
		},
		"team name not a DNS label": {
			doc:      header + "[teams.Training]\nguaranteed = 1\n",
			schemaOK: false, checkOK: false, at: "teams",
		},
		"no teams": {
			doc:      header,
			schemaOK: false, checkOK: false, at: "",
		},
		"capacity zero": {
			doc:      strings.Replace(header, "capacity = 32", "capacity = 0", 1) + "[teams.a]\n",
			schemaOK: false, checkOK: false, at: "flavors/h100/capacity",
		},
		"capacity missing": {
			doc:      strings.Replace(header, "capacity = 32\n", "resource = \"nvidia.com/gpu\"\n", 1) + "[teams.a]\n",
			schemaOK: false, checkOK: false, at: "flavors/h100",
		},
		"resource without a domain": {
			doc:      strings.Replace(header, "capacity = 32", "capacity = 32\nresource = \"gpu\"", 1) + "[teams.a]\n",
			schemaOK: false, checkOK: false, at: "flavors/h100/resource",
		},
		"priority beyond int32": {
			doc:      header + "[priorities]\nhuge = 2147483648\n[teams.a]\n",
			schemaOK: false, checkOK: false, at: "priorities/huge",
		},
		"priority as a table": {
			doc:      header + "[priorities]\nprod = { value = 1000, preemptible = false }\nbatch = 10\n[teams.a]\n",
			schemaOK: true, checkOK: true,
		},
		"priority table without its value": {
			doc:      header + "[priorities]\nprod = { preemptible = false }\n[teams.a]\n",
			schemaOK: false, checkOK: false, at: "priorities/prod",
		},
		"priority table with a typo": {
			doc:      header + "[priorities]\nprod = { value = 1000, preemptable = false }\n[teams.a]\n",
			schemaOK: false, checkOK: false, at: "priorities/prod",
		},
		"empty namespaces": {
			doc:      header + "[teams.a]\nnamespaces = []\n",
			schemaOK: false, checkOK: false, at: "teams/a/namespaces",
		},
		"namespace of Kubernetes itself": {
			doc:      header + "[teams.a]\nnamespaces = [\"kube-system\"]\n",
			schemaOK: false, checkOK: false, at: "teams/a/namespaces/0",
		},
		"namespace listed twice in a team": {
			doc:      header + "[teams.a]\nnamespaces = [\"a\", \"a\"]\n",
			schemaOK: false, checkOK: false, at: "teams/a/namespaces",
		},
		"shorthand with several flavors": {
			doc:      header + "[flavors.a100]\ncapacity = 8\n[teams.a]\nguaranteed = 1\n",
			schemaOK: false, checkOK: false, at: "teams/a/guaranteed",
		},
		"shorthand and flavors on one team": {
			doc:      header + "[teams.a]\nguaranteed = 1\n[teams.a.flavors.h100]\nguaranteed = 1\n",
			schemaOK: false, checkOK: false, at: "teams/a/guaranteed",
		},
		"toleration without key and operator Equal": {
			doc:      strings.Replace(header, "capacity = 32", "capacity = 32\ntolerations = [{ effect = \"NoSchedule\" }]", 1) + "[teams.a]\n",
			schemaOK: false, checkOK: false, at: "flavors/h100/tolerations/0",
		},
		"toleration with Exists and a value": {
			doc:      strings.Replace(header, "capacity = 32", "capacity = 32\ntolerations = [{ key = \"k\", operator = \"Exists\", value = \"v\" }]", 1) + "[teams.a]\n",
			schemaOK: false, checkOK: false, at: "flavors/h100/tolerations/0/value",
		},
		"toleration with an unknown effect": {
			doc:      strings.Replace(header, "capacity = 32", "capacity = 32\ntolerations = [{ key = \"k\", effect = \"NoRun\" }]", 1) + "[teams.a]\n",
			schemaOK: false, checkOK: false, at: "flavors/h100/tolerations/0/effect",
		},
		"topology without levels": {
			doc:      header + "[topology]\nlevels = []\n[teams.a]\n",
			schemaOK: false, checkOK: false, at: "topology/levels",
		},
		"topology with a flavor without node labels": {
			doc:      header + "[topology]\nlevels = [\"kubernetes.io/hostname\"]\n[teams.a]\n",
			schemaOK: false, checkOK: false, at: "flavors/h100",
		},
		"count beyond 2^53": {
			doc:      header + "[teams.a]\nguaranteed = 0\nborrow = 9007199254740993\n",
			schemaOK: false, checkOK: false, at: "teams/a/borrow",
		},
		"negative weight": {
			doc:      header + "[teams.a]\nweight = -1\n",
			schemaOK: false, checkOK: false, at: "teams/a/weight",
		},
		"monitoring": {
			doc:      header + "[teams.a]\n[monitoring]\nenabled = true\nrule_labels = { release = \"kps\" }\n[monitoring.prices]\nh100 = 2.5\n",
			schemaOK: true, checkOK: true,
		},
		"negative price": {
			doc:      header + "[teams.a]\n[monitoring.prices]\nh100 = -1\n",
			schemaOK: false, checkOK: false, at: "monitoring/prices/h100",
		},
		"squatting above 100 percent": {
			doc:      header + "[teams.a]\n[monitoring]\nsquatting_utilization = 101\n",
			schemaOK: false, checkOK: false, at: "monitoring/squatting_utilization",
		},
		"price of an undeclared flavor (check only)": {
			doc:      header + "[teams.a]\n[monitoring.prices]\na100 = 1\n",
			schemaOK: true, checkOK: false,
		},

		// Rules across fields or tables: a schema cannot state them, so an
		// editor accepts what tenancy check rejects.
		"lendable above guaranteed (check only)": {
			doc:      header + "[teams.a]\nguaranteed = 1\nlendable = 2\n",
			schemaOK: true, checkOK: false,
		},
		"guarantees above capacity (check only)": {
			doc:      header + "[teams.a]\nguaranteed = 20\n[teams.b]\nguaranteed = 20\n",
			schemaOK: true, checkOK: false,
		},
		"quota for an undeclared flavor (check only)": {
			doc:      header + "[teams.a.flavors.a100]\nguaranteed = 1\n",
			schemaOK: true, checkOK: false,
		},
		"namespace shared by two teams (check only)": {
			doc:      header + "[teams.a]\nnamespaces = [\"shared\"]\n[teams.b]\nnamespaces = [\"shared\"]\n",
			schemaOK: true, checkOK: false,
		},
		// TOML keeps 32.0 a float; once converted to JSON it is the
		// integer 32 to a draft-07 validator.
		"float capacity (check only)": {
			doc:      strings.Replace(header, "capacity = 32", "capacity = 32.0", 1) + "[teams.a]\n",
			schemaOK: true, checkOK: false,
		},
	}
}

func TestSchemaAgreesWithCheck(t *testing.T) {
	sch := schematest.Compile(t, agreement.Schema)
	for name, tc := range schemaCases() {
		t.Run(name, func(t *testing.T) {
			err := sch.Validate(schematest.TOMLAsJSON(t, tc.doc))
			if got := err == nil; got != tc.schemaOK {
				t.Errorf("schema valid = %v, want %v (error: %v)", got, tc.schemaOK, err)
			}
			if err != nil && !tc.schemaOK {
				locs := leafLocations(err)
				found := false
				for _, l := range locs {
					found = found || l == tc.at
				}
				if !found {
					t.Errorf("schema reports the problem at %q, want %q:\n%v", locs, tc.at, err)
				}
			}
			_, _, checkErr := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(tc.doc)}, generator.Options{})
			if got := checkErr == nil; got != tc.checkOK {
				t.Errorf("generator.Check valid = %v, want %v (error: %v)", got, tc.checkOK, checkErr)
			}
		})
	}
}

// TestSchemaWithTaplo runs the schema through Taplo, the engine of Even
// Better TOML, so what an editor shows is tested rather than assumed. TAPLO
// names the taplo binary (npm @taplo/cli; make test installs it when npm is
// there); without it the test is skipped, unless TENANCY_REQUIRE_TAPLO is set.
func TestSchemaWithTaplo(t *testing.T) {
	taplo := os.Getenv("TAPLO")
	if taplo == "" {
		if os.Getenv("TENANCY_REQUIRE_TAPLO") != "" {
			t.Fatal("TAPLO is not set: install @taplo/cli and point TAPLO at its taplo")
		}
		t.Skip("TAPLO is not set (path to the taplo of npm @taplo/cli)")
	}
	dir := t.TempDir()
	schema := filepath.Join(dir, "tenancy.schema.json")
	if err := os.WriteFile(schema, agreement.Schema, 0o644); err != nil {
		t.Fatal(err)
	}

	// Every document starts with the #:schema directive README.md tells
	// users to put at the top of their tenancy.toml, with a path relative
	// to the file; so the directive is tested too.
	const directive = "#:schema ./tenancy.schema.json\n"
	want := map[string]bool{} // file → valid
	for name, tc := range schemaCases() {
		file := filepath.Join(dir, "case-"+fileName(name)+".toml")
		if err := os.WriteFile(file, []byte(directive+tc.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		want[file] = tc.schemaOK
	}
	for _, path := range agreementFiles(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "example-"+fileName(path)+".toml")
		if err := os.WriteFile(file, append([]byte(directive), src...), 0o644); err != nil {
			t.Fatal(err)
		}
		want[file] = true
	}
	// One run for all: each start of taplo costs seconds.
	got := taploValid(t, taplo, dir, sortedKeys(want))
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("valid according to taplo (-want,+got):\n%s", d)
	}
}

// fileName turns a case name into a file name.
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(name))
}

// taploValid runs taplo check on files and returns, per file, whether taplo
// found it valid.
func taploValid(t *testing.T, taplo, dir string, files []string) map[string]bool {
	t.Helper()
	args := []string{"check", "--colors", "never", "--no-auto-config"}
	cmd := exec.Command(taplo, append(args, files...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run taplo: %v", err)
	}
	got := map[string]bool{}
	for _, f := range files {
		got[f] = true
	}
	// taplo logs one line per file that fails:
	//   ERROR taplo:lint_files: invalid file error=schema validation failed path="/abs/file.toml"
	for _, line := range strings.Split(string(out), "\n") {
		_, rest, ok := strings.Cut(line, "invalid file ")
		if !ok {
			continue
		}
		_, path, ok := strings.Cut(rest, ` path="`)
		if !ok {
			t.Fatalf("unexpected taplo line: %s", line)
		}
		path = strings.TrimSuffix(strings.TrimSpace(path), `"`)
		if !strings.Contains(rest, "schema validation failed") {
			t.Errorf("taplo failed on %s for another reason than the schema: %s", path, line)
		}
		if _, known := got[path]; !known {
			t.Fatalf("taplo reports a file it was not given: %s\n%s", path, out)
		}
		got[path] = false
	}
	if invalid := slices.Contains(slices.Collect(maps.Values(got)), false); invalid != (err != nil) {
		t.Errorf("taplo exit status %v, but invalid files = %v:\n%s", err, invalid, out)
	}
	return got
}

// TestSchemaNeverStricterThanCheck mutates the examples at random (a fixed
// seed, so failures reproduce) and asserts that every agreement tenancy
// check accepts, the schema accepts too: an editor must never flag a file
// the tool renders.
func TestSchemaNeverStricterThanCheck(t *testing.T) {
	sch := schematest.Compile(t, agreement.Schema)
	var docs []map[string]any
	for _, path := range agreementFiles(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(src) > 64<<10 {
			continue // the large example only repeats what the others have
		}
		var doc map[string]any
		if err := toml.Unmarshal(src, &doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, doc)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for i := range 500 {
		doc := mutate(rng, deepCopy(docs[i%len(docs)]).(map[string]any))
		src, err := toml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := generator.CheckAll(generator.Source{Path: "tenancy.toml", Data: src}, generator.Options{}); err != nil {
			continue
		}
		accepted++
		if err := sch.Validate(schematest.TOMLAsJSON(t, string(src))); err != nil {
			t.Errorf("tenancy check accepts this agreement, the schema does not:\n%s\n%v", src, err)
		}
	}
	// The mutations must leave valid agreements often enough to mean something.
	if accepted < 100 {
		t.Errorf("only %d of 500 mutated agreements were valid", accepted)
	}
}

// mutate changes one or two values somewhere in doc: a key is added, an
// integer becomes another small integer, a string one of a few that
// matter, a table or array goes.
func mutate(rng *rand.Rand, doc map[string]any) map[string]any {
	for range 1 + rng.IntN(2) {
		table, key := pick(rng, doc)
		if table == nil {
			continue
		}
		if rng.IntN(3) == 0 {
			// Add a key of the format where it may or may not belong.
			keys := []string{"weight", "vms", "borrow", "lendable", "guaranteed", "reclaim", "resource", "capacity", "effect"}
			key = keys[rng.IntN(len(keys))]
			table[key] = any(int64(rng.IntN(40) - 2))
			if rng.IntN(2) == 0 {
				table[key] = ""
			}
		}
		switch v := table[key].(type) {
		case int64:
			table[key] = int64(rng.IntN(40) - 2)
		case string:
			choices := []string{v, "preempt", "wait", "Exists", "Equal", "NoSchedule", "nvidia.com/gpu", "kueue", "kai", "x"}
			table[key] = choices[rng.IntN(len(choices))]
		default:
			if key != "version" && key != "name" {
				delete(table, key)
			}
		}
	}
	return doc
}

// pick returns a random table of doc and one of its keys, in a stable order.
func pick(rng *rand.Rand, doc map[string]any) (map[string]any, string) {
	table := doc
	for {
		keys := sortedKeys(table)
		if len(keys) == 0 {
			return nil, ""
		}
		key := keys[rng.IntN(len(keys))]
		next, ok := table[key].(map[string]any)
		if !ok || rng.IntN(4) == 0 {
			return table, key
		}
		table = next
	}
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}
