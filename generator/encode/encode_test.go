package encode_test

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator/encode"
	"github.com/tenancy-dev/tenancy/generator/internal/goldentest"
	"github.com/tenancy-dev/tenancy/generator/render"
)

func object(kind, namespace, name string, spec map[string]any) render.Object {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	return render.Object{Fields: map[string]any{"apiVersion": "example.com/v1", "kind": kind, "metadata": meta, "spec": spec}}
}

func encodeOne(t *testing.T, o render.Object) render.Object {
	t.Helper()
	out, stream, err := encode.Encode([]render.Object{o})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || string(stream) != string(out[0].YAML) {
		t.Fatalf("one object: got %d objects and a stream that is not its YAML", len(out))
	}
	return out[0]
}

// readBack parses YAML as kubectl and Argo CD do.
func readBack(t *testing.T, data []byte) any {
	t.Helper()
	return readWith(t, func(b []byte, v any) error { return yaml.Unmarshal(b, v) }, data)
}

// readBackYAML12 parses YAML as kustomize does (kyaml, a YAML 1.2 reader).
func readBackYAML12(t *testing.T, data []byte) any {
	t.Helper()
	return readWith(t, kyaml.Unmarshal, data)
}

func readWith(t *testing.T, unmarshal func([]byte, any) error, data []byte) any {
	t.Helper()
	var v any
	if err := unmarshal(data, &v); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return v
}

// tricky are strings a YAML reader would take for something else, or
// mangle, if they were written plain.
var tricky = []string{
	// YAML 1.1 booleans and nulls (sigs.k8s.io/yaml reads YAML 1.1).
	"yes", "no", "on", "off", "y", "n", "Y", "N", "Yes", "NO", "True", "FALSE", "null", "Null", "NULL", "~",
	// Numbers in all their spellings.
	"1e3", "0x10", "0o17", "017", "1_000", "+1", "-1", ".5", "1.", ".inf", "-.Inf", ".NaN", "12:30", "1:2:3",
	"16", "16000m", "100Ti", "0",
	// Dates, which YAML 1.1 readers may turn into timestamps.
	"2001-12-14", "2001-12-14t21:59:43.10-05:00",
	// Whitespace and emptiness.
	"", " ", " x", "x ", "\tx", "x\t", "multi\nline", "trailing\n", "\nleading", "cr\rlf", "a\u00a0b",
	// Indicators.
	"a: b", "a:b", "a :b", "#x", "a #b", "a#b", "- x", "-", "--", "---", "...", "? x", "?x", ": x", "&a", "*a",
	"!tag", "%x", "@x", "`x", "|", ">", "'q'", `"q"`, "[a]", "{a}", "a, b", "a,", "=", "<<",
	// Escapes and non-ASCII.
	`back\slash`, "tab\there", "nul\x00", "bell\a", "é", "日本語", "emoji 🙂", "\u2028", "\ufeffbom",
	// Multi-line strings: literal blocks where they read back as the same
	// string, double-quoted where a block would change them.
	"two\nlines", "a\n b\n  c", "blank\n\nline", "ends\n", "ends twice\n\n", "\n", "\n\n", " lead\nx",
	"x \ny", "x\n \ny", "x\ny ", "x\n\ty", "x\ty\nz", "crlf\r\nz", "x\n\u2028y", "x\n\u0085y", "x\n\ufeffy",
	"x\n\u00a0", "#c\n- d\n---\n...\n", "key: v\n  nested: 1\n", "{\n  \"a\": \"b\"\n}", "|\n>", "é\n日本語",
	"x\n\x00", "\"q\"\n'q'",
	// Plain strings that must stay readable as they are.
	"nvidia.com/gpu", "kubernetes.io/metadata.name", "gpu-pool", "Priority critical of the GPU pool gpu-pool",
}

func TestTrickyStringsRoundTrip(t *testing.T) {
	for _, s := range tricky {
		t.Run(fmt.Sprintf("%q", s), func(t *testing.T) {
			// As a value, as a key, in a list and in a list of maps.
			spec := map[string]any{
				"value": s,
				"keys":  map[string]any{s: "v"},
				"list":  []any{s, "after"},
				"items": []any{map[string]any{"name": s, "z": s}},
			}
			o := encodeOne(t, object("Thing", "", "thing", spec))
			got := readBack(t, o.YAML)
			want := goldentest.AsRead(t, o.Fields)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("read back (-fields,+yaml):\n%s\nyaml:\n%s", diff, o.YAML)
			}
			if diff := cmp.Diff(want, goldentest.AsRead(t, readBackYAML12(t, o.YAML))); diff != "" {
				t.Errorf("read back by kyaml (-fields,+yaml):\n%s\nyaml:\n%s", diff, o.YAML)
			}
			gotSpec, _ := got.(map[string]any)["spec"].(map[string]any)
			if gotSpec["value"] != s {
				t.Errorf("value read back as %#v, want %q", gotSpec["value"], s)
			}
		})
	}
}

// TestMultilineStringsAreLiteralBlocks: a string with newlines is written
// one line of YAML per line, so a diff of the output shows which line
// changed; "|" keeps the final newline, "|-" says there is none.
func TestMultilineStringsAreLiteralBlocks(t *testing.T) {
	tests := map[string]struct {
		spec map[string]any
		want string
	}{
		"value without final newline": {
			spec: map[string]any{"v": "{\n  \"a\": 1,\n\n  \"b\": [\n    2\n  ]\n}"},
			want: "spec:\n  v: |-\n    {\n      \"a\": 1,\n\n      \"b\": [\n        2\n      ]\n    }\n",
		},
		"value with final newline": {
			spec: map[string]any{"v": "a\nb\n"},
			want: "spec:\n  v: |\n    a\n    b\n",
		},
		"list item": {
			spec: map[string]any{"l": []any{"a\nb", "c"}},
			want: "spec:\n  l:\n  - |-\n    a\n    b\n  - c\n",
		},
		"value in a list of maps": {
			spec: map[string]any{"l": []any{map[string]any{"expression": "x &&\n  y", "name": "rule"}}},
			want: "spec:\n  l:\n  - expression: |-\n      x &&\n        y\n    name: rule\n",
		},
		"nested lists": {
			spec: map[string]any{"l": []any{[]any{"a\nb"}}},
			// A list in a list starts on the next line, as before.
			want: "spec:\n  l:\n  - \n    - |-\n      a\n      b\n",
		},
		"trailing space keeps the quotes": {
			spec: map[string]any{"v": "a \nb"},
			want: "spec:\n  v: \"a \\nb\"\n",
		},
		"key keeps the quotes": {
			spec: map[string]any{"a\nb": "v"},
			want: "spec:\n  \"a\\nb\": v\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := encodeOne(t, object("Thing", "", "thing", tc.spec))
			_, got, _ := strings.Cut(string(o.YAML), "spec:\n")
			if diff := cmp.Diff(tc.want, "spec:\n"+got); diff != "" {
				t.Errorf("YAML (-want,+got):\n%s", diff)
			}
			want := goldentest.AsRead(t, o.Fields)
			if diff := cmp.Diff(want, readBack(t, o.YAML)); diff != "" {
				t.Errorf("read back (-fields,+yaml):\n%s", diff)
			}
			if diff := cmp.Diff(want, goldentest.AsRead(t, readBackYAML12(t, o.YAML))); diff != "" {
				t.Errorf("read back by kyaml (-fields,+yaml):\n%s", diff)
			}
		})
	}
}

func TestPlainStringsStayPlain(t *testing.T) {
	// Quoting everything would round-trip too; these stay as kubectl writes them.
	for _, s := range []string{"nvidia.com/gpu", "gpu-pool", "BestEffortFIFO", "kubernetes.io/metadata.name", "a b"} {
		o := encodeOne(t, object("Thing", "", "thing", map[string]any{"value": s}))
		if want := "  value: " + s + "\n"; !strings.Contains(string(o.YAML), want) {
			t.Errorf("%q: want the line %q in:\n%s", s, want, o.YAML)
		}
	}
}

func TestValuesRoundTrip(t *testing.T) {
	tests := map[string]any{
		"ints":          map[string]any{"zero": int64(0), "neg": int64(-1), "big": int64(1) << 52},
		"floats":        map[string]any{"half": 0.5, "tiny": 1e-7, "huge": 1e21, "whole": 2.0},
		"bools and nil": map[string]any{"t": true, "f": false, "nil": nil},
		"empty":         map[string]any{"map": map[string]any{}, "list": []any{}, "string": ""},
		"nested lists":  map[string]any{"l": []any{[]any{"a", "b"}, []any{}, []any{[]any{"c"}}, map[string]any{}}},
		"list of maps": map[string]any{"l": []any{
			map[string]any{"name": "a", "resources": []any{map[string]any{"name": "cpu", "q": "1"}}},
			map[string]any{"nested": map[string]any{"deeper": map[string]any{"x": []any{"y"}}}},
		}},
	}
	for name, spec := range tests {
		t.Run(name, func(t *testing.T) {
			o := encodeOne(t, object("Thing", "", "thing", spec.(map[string]any)))
			if diff := cmp.Diff(goldentest.AsRead(t, o.Fields), readBack(t, o.YAML)); diff != "" {
				t.Errorf("read back (-fields,+yaml):\n%s\nyaml:\n%s", diff, o.YAML)
			}
			if diff := cmp.Diff(goldentest.AsRead(t, o.Fields), goldentest.AsRead(t, readBackYAML12(t, o.YAML))); diff != "" {
				t.Errorf("read back by kyaml (-fields,+yaml):\n%s\nyaml:\n%s", diff, o.YAML)
			}
		})
	}
}

func TestKeysSortedAndOutputStable(t *testing.T) {
	spec := map[string]any{}
	var keys []string
	for i := 0; i < 40; i++ {
		k := fmt.Sprintf("k%02d-%c", (i*17)%40, 'a'+i%26)
		keys = append(keys, k)
		spec[k] = map[string]any{"z": int64(1), "a": int64(2), "m": []any{map[string]any{"x": int64(1), "b": int64(2)}}}
	}
	sort.Strings(keys)
	first := encodeOne(t, object("Thing", "", "thing", spec))
	// Go randomises map iteration: twenty encodings catch any reliance on it.
	for i := 0; i < 20; i++ {
		if again := encodeOne(t, object("Thing", "", "thing", spec)); string(again.YAML) != string(first.YAML) {
			t.Fatalf("encoding %d differs:\n%s\nfirst:\n%s", i, again.YAML, first.YAML)
		}
	}
	var got []string
	for _, line := range strings.Split(string(first.YAML), "\n") {
		if strings.HasPrefix(line, "  k") {
			got = append(got, strings.TrimSuffix(strings.TrimSpace(line), ":"))
		}
	}
	if diff := cmp.Diff(keys, got); diff != "" {
		t.Errorf("spec keys in output order (-sorted,+got):\n%s", diff)
	}
	if !strings.Contains(string(first.YAML), "    a: 2\n    m:\n    - b: 2\n      x: 1\n    z: 1\n") {
		t.Errorf("nested keys are not sorted, or not indented as kubectl does:\n%s", first.YAML)
	}
	if !strings.HasPrefix(string(first.YAML), "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: thing\nspec:\n") {
		t.Errorf("top-level keys are not sorted:\n%s", first.YAML[:80])
	}
}

// TestUnsupportedValueIsAnError: the writer takes unstructured content only;
// anything else is a renderer's mistake and must fail, not print.
func TestUnsupportedValueIsAnError(t *testing.T) {
	for name, v := range map[string]any{
		"int":        7,
		"int32":      int32(7),
		"string map": map[string]string{"a": "b"},
		"strings":    []string{"a"},
		"struct":     struct{}{},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := encode.Encode([]render.Object{object("Thing", "", "thing", map[string]any{"v": v})})
			if err == nil {
				t.Fatalf("%T encoded without error", v)
			}
		})
	}
}

// TestTypedObjectsEncode: a typed object converted by render.FromTyped loses
// status and the null creationTimestamp and encodes like kubectl writes it.
func TestTypedObjectsEncode(t *testing.T) {
	ns := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"a": "b"}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
	typed, err := render.FromTyped(ns)
	if err != nil {
		t.Fatal(err)
	}
	o := encodeOne(t, typed)
	want := "apiVersion: v1\nkind: Namespace\nmetadata:\n  labels:\n    a: b\n  name: team\nspec: {}\n"
	if diff := cmp.Diff(want, string(o.YAML)); diff != "" {
		t.Errorf("YAML (-want,+got):\n%s", diff)
	}
	if _, ok := o.Fields["status"]; ok {
		t.Error("Fields has a status")
	}
}

func TestObjectOrder(t *testing.T) {
	objs := []render.Object{
		object("LocalQueue", "b", "q", nil),
		object("LocalQueue", "a", "q", nil),
		object("ClusterQueue", "", "b", nil),
		object("ClusterQueue", "", "a", nil),
		object("Cohort", "", "pool", nil),
		object("ResourceFlavor", "", "h100", nil),
		object("Namespace", "", "b", nil),
		object("Namespace", "", "a", nil),
		object("WorkloadPriorityClass", "", "low", nil),
		object("Topology", "", "pool", nil),
		object("ResourceQuota", "a", "vms", nil),
		// KAI Queues keep the renderer's order: parents before children.
		object("Queue", "", "pool", nil),
		object("Queue", "", "pool-shared", nil),
		object("Queue", "", "b-team", nil),
		object("Queue", "", "a-team", nil),
		// The windows controller's objects, and a kind no family renders
		// today, which goes last.
		object("Widget", "", "w", nil),
		object("Deployment", "tenancy-system", "c", nil),
		object("RoleBinding", "tenancy-system", "c", nil),
		object("ClusterRoleBinding", "", "c", nil),
		object("Role", "tenancy-system", "c", nil),
		object("ClusterRole", "", "c", nil),
		object("ServiceAccount", "tenancy-system", "c", nil),
		object("ConfigMap", "tenancy-system", "c", nil),
		object("ValidatingAdmissionPolicyBinding", "", "p", nil),
		object("ValidatingAdmissionPolicy", "", "p", nil),
		object("Namespace", "", "tenancy-system", nil),
	}
	out, stream, err := encode.Encode(objs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range out {
		got = append(got, o.Kind()+" "+o.Namespace()+"/"+o.Name())
	}
	want := []string{
		"Namespace /a", "Namespace /b", "Namespace /tenancy-system",
		"WorkloadPriorityClass /low",
		"Topology /pool",
		"ResourceFlavor /h100",
		"Cohort /pool",
		"ClusterQueue /a", "ClusterQueue /b",
		"Queue /pool", "Queue /pool-shared", "Queue /b-team", "Queue /a-team",
		"LocalQueue a/q", "LocalQueue b/q",
		"ConfigMap tenancy-system/c",
		"ResourceQuota a/vms",
		"ServiceAccount tenancy-system/c",
		"ClusterRole /c", "Role tenancy-system/c",
		"ClusterRoleBinding /c", "RoleBinding tenancy-system/c",
		"Deployment tenancy-system/c",
		"ValidatingAdmissionPolicy /p",
		"ValidatingAdmissionPolicyBinding /p",
		"Widget /w",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want,+got):\n%s", diff)
	}
	var docs []string
	for _, o := range out {
		docs = append(docs, string(o.YAML))
	}
	if diff := cmp.Diff(strings.Join(docs, "---\n"), string(stream)); diff != "" {
		t.Errorf("stream is not the objects joined by ---:\n%s", diff)
	}
}

// TestLongKeyIsAnError: YAML readers refuse a key longer than 1024
// characters, so the writer refuses to write one.
func TestLongKeyIsAnError(t *testing.T) {
	long := strings.Repeat("k", 1025)
	_, _, err := encode.Encode([]render.Object{object("Thing", "", "thing", map[string]any{long: "v"})})
	if err == nil {
		t.Fatalf("a key of %d bytes encoded without error", len(long))
	}
	// The longest key allowed (plain, so as long as written) reads back.
	o := encodeOne(t, object("Thing", "", "thing", map[string]any{long[:1024]: "v"}))
	readBack(t, o.YAML)
	readBackYAML12(t, o.YAML)
}

func TestDuplicateObjectIsAnError(t *testing.T) {
	_, _, err := encode.Encode([]render.Object{object("Cohort", "", "pool", nil), object("Cohort", "", "pool", nil)})
	if err == nil {
		t.Fatal("two identical objects encoded without error")
	}
}

// TestOrderFindsEveryDuplicate: Order reports each object whose identity an
// earlier one has, with that one, so check can report them all at once;
// objects of one name but another kind or namespace are not duplicates.
func TestOrderFindsEveryDuplicate(t *testing.T) {
	objs := []render.Object{
		object("Namespace", "", "a", map[string]any{"n": int64(1)}),
		object("LocalQueue", "a", "default", nil),
		object("Namespace", "", "a", map[string]any{"n": int64(2)}),
		object("LocalQueue", "a", "default", nil),
		object("LocalQueue", "b", "default", nil),
		object("ClusterQueue", "", "default", nil),
	}
	ordered, dups := encode.Order(objs)
	if len(ordered) != len(objs) {
		t.Errorf("Order returned %d objects, want all %d", len(ordered), len(objs))
	}
	var got []string
	for _, d := range dups {
		got = append(got, d.Error())
	}
	want := []string{"two objects are both Namespace /a", "two objects are both LocalQueue a/default"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("duplicates (-want,+got):\n%s", diff)
	}
	// The first of a pair is the one rendered first (the sort is stable).
	if n, _ := dups[0].First.Fields["spec"].(map[string]any)["n"].(int64); n != 1 {
		t.Errorf("First of the Namespace pair has n = %d, want the one rendered first", n)
	}
}

// FuzzStringRoundTrip: any valid UTF-8 string, written as a value, a key and
// a list item, reads back as itself with both YAML readers, whichever form
// (plain, quoted, literal block) the writer chose.
func FuzzStringRoundTrip(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("not UTF-8: Kubernetes objects hold UTF-8 strings")
		}
		spec := map[string]any{"value": s, "list": []any{s, "after"}}
		if len(s) <= 200 { // quoted, at most 4 bytes a byte: within YAML's 1024 for a key
			spec["keys"] = map[string]any{s: "v"}
		}
		o := encodeOne(t, object("Thing", "", "thing", spec))
		want := goldentest.AsRead(t, o.Fields)
		if diff := cmp.Diff(want, readBack(t, o.YAML)); diff != "" {
			t.Errorf("read back (-fields,+yaml):\n%s\nyaml:\n%s", diff, o.YAML)
		}
		if diff := cmp.Diff(want, goldentest.AsRead(t, readBackYAML12(t, o.YAML))); diff != "" {
			t.Errorf("read back by kyaml (-fields,+yaml):\n%s\nyaml:\n%s", diff, o.YAML)
		}
	})
}

// TestCheckIsWriteWithoutYAML holds Check's verdict to Write's, the first
// error included, for every value Write refuses and where it sits.
func TestCheckIsWriteWithoutYAML(t *testing.T) {
	long := strings.Repeat("k", 1025)
	quotedLong := "1" + strings.Repeat("k", 1022) // plain 1023 bytes, 1025 quoted
	tests := map[string][]render.Object{
		"fine": {object("Thing", "", "a", map[string]any{"s": "x", "n": int64(1), "f": 1.5, "b": true, "z": nil,
			"m": map[string]any{}, "l": []any{map[string]any{"k": "v"}, []any{"x"}, []any{}}})},
		"unsupported":                   {object("Thing", "", "a", map[string]any{"v": 7})},
		"unsupported in a list":         {object("Thing", "", "a", map[string]any{"l": []any{"x", []any{int32(1)}}})},
		"unsupported in a nested map":   {object("Thing", "", "a", map[string]any{"m": map[string]any{"x": []string{"a"}}})},
		"the first of two, by key":      {object("Thing", "", "a", map[string]any{"b": 7, "a": int32(7)})},
		"key too long":                  {object("Thing", "", "a", map[string]any{long: "v"})},
		"key too long once quoted":      {object("Thing", "", "a", map[string]any{quotedLong: "v"})},
		"key too long before its value": {object("Thing", "", "a", map[string]any{long: 7})},
		"the second object":             {object("Thing", "", "a", map[string]any{"v": "ok"}), object("Other", "ns", "b", map[string]any{"v": uint(1)})},
		// Check does not write keys of at most 255 bytes: quoted, a byte
		// takes at most 4 (\x00), so 255 of them fit in 1024.
		"fine: the longest key Check does not write": {object("Thing", "", "a", map[string]any{strings.Repeat("\x00", 255): "v"})},
		"key of 256 escaped bytes":                   {object("Thing", "", "a", map[string]any{strings.Repeat("\x00", 256): "v"})},
		"key of 256 invalid bytes":                   {object("Thing", "", "a", map[string]any{strings.Repeat("\xff", 256): "v"})},
		"fine: 256 bytes, short once quoted":         {object("Thing", "", "a", map[string]any{"1" + strings.Repeat("k", 255): "v"})},
	}
	errString := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	for name, objs := range tests {
		t.Run(name, func(t *testing.T) {
			checked := errString(encode.Check(objs))
			written, _, err := encode.Write(slices.Clone(objs))
			if diff := cmp.Diff(errString(err), checked); diff != "" {
				t.Errorf("Check's error (-Write's,+Check's):\n%s", diff)
			}
			if (err == nil) != strings.HasPrefix(name, "fine") {
				t.Errorf("Write's error %v: the case does not test what it says", err)
			}
			// YAML writes one object as Write does, and refuses it alike.
			for i, o := range objs {
				y, err := encode.YAML(o)
				if err != nil {
					if written != nil || !strings.Contains(checked, err.Error()) {
						t.Errorf("YAML of object %d: %v; Write said %q", i, err, checked)
					}
					continue
				}
				if written != nil && !bytes.Equal(y, written[i].YAML) {
					t.Errorf("YAML of object %d:\n%s\nWrite's:\n%s", i, y, written[i].YAML)
				}
			}
		})
	}
}
