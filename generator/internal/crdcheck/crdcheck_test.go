package crdcheck_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator/internal/crdcheck"
)

func load(t *testing.T) *crdcheck.CRD {
	t.Helper()
	crd, err := crdcheck.Load(filepath.Join("testdata", "widgets.example.com.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

func decode(t *testing.T, doc string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// fieldErr is an expected error: only its type and path are compared.
func fieldErr(typ field.ErrorType, path string) *field.Error {
	return &field.Error{Type: typ, Field: path}
}

// skippedCEL is the error the API server adds when an earlier error keeps it
// from running the CEL rules.
var skippedCEL = fieldErr(field.ErrorTypeInvalid, "<nil>")

// compareErrors compares by type and path, not by wording.
var compareErrors = cmp.Options{
	cmpopts.IgnoreFields(field.Error{}, "Detail", "BadValue", "Origin"),
	cmpopts.SortSlices(func(a, b *field.Error) bool {
		return a.Field+string(a.Type) < b.Field+string(b.Type)
	}),
	cmpopts.EquateEmpty(),
}

func TestValidate(t *testing.T) {
	const head = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team-a, labels: {a: b}, annotations: {c: d}}\n"
	tests := map[string]struct {
		doc  string
		want field.ErrorList
	}{
		"valid": {
			doc: head + "spec: {size: 3, mode: Fast, maybe: null, ports: [{name: a}, {name: b}], nested: {policy: Never}}",
		},
		"valid, with the CEL rule's other branch": {doc: head + "spec: {size: 9, mode: Slow}"},
		"wrong type": {
			doc:  head + `spec: {size: "3"}`,
			want: field.ErrorList{fieldErr(field.ErrorTypeTypeInvalid, "spec.size"), skippedCEL},
		},
		"not in the enum": {
			doc:  head + "spec: {size: 3, mode: Medium}",
			want: field.ErrorList{fieldErr(field.ErrorTypeNotSupported, "spec.mode"), skippedCEL},
		},
		"above the maximum": {
			doc:  head + "spec: {size: 11, mode: Slow}",
			want: field.ErrorList{fieldErr(field.ErrorTypeInvalid, "spec.size")},
		},
		"required field missing": {
			doc:  head + "spec: {mode: Slow}",
			want: field.ErrorList{fieldErr(field.ErrorTypeRequired, "spec.size"), skippedCEL},
		},
		"unknown field is pruned": {
			doc:  head + "spec: {size: 3, colour: red}",
			want: field.ErrorList{fieldErr(field.ErrorTypeForbidden, "spec.colour")},
		},
		"unknown field in a list item is pruned": {
			doc:  head + "spec: {size: 3, ports: [{name: a, port: 80}]}",
			want: field.ErrorList{fieldErr(field.ErrorTypeForbidden, "spec.ports[0].port")},
		},
		"unknown root field is pruned": {
			doc:  head + "spec: {size: 3}\nstatus: {}",
			want: field.ErrorList{fieldErr(field.ErrorTypeForbidden, "status")},
		},
		"unknown metadata field is dropped": {
			doc:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team-a, label: {a: b}}\nspec: {size: 3}",
			want: field.ErrorList{fieldErr(field.ErrorTypeForbidden, "metadata.label")},
		},
		"metadata that is not ObjectMeta": {
			doc:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team-a, labels: {a: 1}}\nspec: {size: 3}",
			want: field.ErrorList{fieldErr(field.ErrorTypeInvalid, "metadata")},
		},
		// ObjectMeta, validated as for every object (ValidateObjectMetaAccessor).
		"name not a DNS subdomain": {
			doc:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: W_1, namespace: team-a}\nspec: {size: 3}",
			want: field.ErrorList{fieldErr(field.ErrorTypeInvalid, "metadata.name")},
		},
		"no name": {
			doc:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {namespace: team-a}\nspec: {size: 3}",
			want: field.ErrorList{fieldErr(field.ErrorTypeRequired, "metadata.name"), skippedCEL},
		},
		"no namespace on a namespaced kind": {
			doc:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3}",
			want: field.ErrorList{fieldErr(field.ErrorTypeRequired, "metadata.namespace"), skippedCEL},
		},
		"label key not a qualified name": {
			doc:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team-a, labels: {'a b': c}}\nspec: {size: 3}",
			want: field.ErrorList{fieldErr(field.ErrorTypeInvalid, "metadata.labels")},
		},
		"label value invalid": {
			doc:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team-a, labels: {a: -b}}\nspec: {size: 3}",
			want: field.ErrorList{fieldErr(field.ErrorTypeInvalid, "metadata.labels")},
		},
		"annotation key invalid": {
			doc:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team-a, annotations: {'/x': v}}\nspec: {size: 3}",
			want: field.ErrorList{fieldErr(field.ErrorTypeInvalid, "metadata.annotations")},
		},
		"null where not nullable is dropped": {
			doc:  head + "spec: {size: 3, note: null}",
			want: field.ErrorList{fieldErr(field.ErrorTypeForbidden, "spec.note")},
		},
		"CEL rule broken": {
			doc:  head + "spec: {size: 7, mode: Fast}",
			want: field.ErrorList{fieldErr(field.ErrorTypeInvalid, "spec")},
		},
		"CEL rule broken by a default": {
			doc:  head + "spec: {size: 7}",
			want: field.ErrorList{fieldErr(field.ErrorTypeInvalid, "spec")},
		},
		"duplicate key in a map list": {
			doc:  head + "spec: {size: 3, ports: [{name: a}, {name: a}]}",
			want: field.ErrorList{fieldErr(field.ErrorTypeDuplicate, "spec.ports[1]")},
		},
		"version not served": {
			doc:  "apiVersion: example.com/v1old\nkind: Widget\nspec: {size: 3}",
			want: field.ErrorList{fieldErr(field.ErrorTypeNotSupported, "apiVersion")},
		},
		"other group": {
			doc:  "apiVersion: other.com/v1\nkind: Widget\nspec: {size: 3}",
			want: field.ErrorList{fieldErr(field.ErrorTypeInvalid, "apiVersion")},
		},
		"other kind": {
			doc:  "apiVersion: example.com/v1\nkind: Gadget\nspec: {size: 3}",
			want: field.ErrorList{fieldErr(field.ErrorTypeNotSupported, "kind")},
		},
	}
	crd := load(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := crd.Validate(decode(t, tc.doc))
			if diff := cmp.Diff(tc.want, got, compareErrors); diff != "" {
				t.Errorf("errors (-want,+got):\n%s\ngot: %v", diff, got)
			}
		})
	}
}

// scopedCRD is a CRD with a status subresource, of the given scope.
func scopedCRD(t *testing.T, scope string) *crdcheck.CRD {
	t.Helper()
	crd, err := crdcheck.Parse([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: ` + scope + `
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
          status: {type: object, properties: {ready: {type: boolean}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

// TestValidateAsOnCreate: what the API server's strategy does on create
// beyond the schema, with the scope and subresources of the CRD.
func TestValidateAsOnCreate(t *testing.T) {
	tests := map[string]struct {
		scope, doc string
		want       field.ErrorList
	}{
		"cluster-scoped": {
			scope: "Cluster",
			doc:   "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {size: 1}",
		},
		"namespace on a cluster-scoped kind": {
			scope: "Cluster",
			doc:   "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: team-a}\nspec: {size: 1}",
			want:  field.ErrorList{fieldErr(field.ErrorTypeForbidden, "metadata.namespace")},
		},
		"status dropped on create": {
			scope: "Namespaced",
			doc:   "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: team-a}\nspec: {size: 1}\nstatus: {ready: true}",
			want:  field.ErrorList{fieldErr(field.ErrorTypeForbidden, "status")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := scopedCRD(t, tc.scope).Validate(decode(t, tc.doc))
			if diff := cmp.Diff(tc.want, got, compareErrors); diff != "" {
				t.Errorf("errors (-want,+got):\n%s\ngot: %v", diff, got)
			}
		})
	}
}

// TestValidateLeavesTheObjectAlone: the checks prune and default a copy.
func TestValidateLeavesTheObjectAlone(t *testing.T) {
	const doc = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3, colour: red, note: null}"
	obj := decode(t, doc)
	load(t).Validate(obj)
	if diff := cmp.Diff(decode(t, doc), obj); diff != "" {
		t.Errorf("Validate changed the object (-before,+after):\n%s", diff)
	}
}

// TestValidateTakesGoIntegers: renderers' maps hold Go ints, decoders'
// float64s; the API server sees the same JSON either way.
func TestValidateTakesGoIntegers(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "team-a"},
		"spec":     map[string]any{"size": 3, "mode": "Fast"},
	}
	if errs := load(t).Validate(obj); len(errs) > 0 {
		t.Errorf("errors: %v", errs)
	}
}

func TestMissingDefaults(t *testing.T) {
	tests := map[string]struct {
		spec string
		want []string
	}{
		"all written out":      {spec: "{size: 1, mode: Fast, nested: {policy: Never}}"},
		"field with a default": {spec: "{size: 1, nested: {policy: Never}}", want: []string{"spec.mode"}},
		"null with a default":  {spec: "{size: 1, mode: null, nested: {policy: Never}}", want: []string{"spec.mode"}},
		"object with a default, then its fields' defaults": {
			spec: "{size: 1, mode: Fast}",
			want: []string{"spec.nested", "spec.nested.policy"},
		},
		"nested default": {spec: "{size: 1, mode: Fast, nested: {}}", want: []string{"spec.nested.policy"}},
		"no defaults inside an unknown field": {
			spec: "{size: 1, mode: Fast, nested: {policy: Never}, extra: {nested: {}}}",
		},
	}
	crd := load(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := decode(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: "+tc.spec)
			got, err := crd.MissingDefaults(obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("missing defaults (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestMissingDefaultsOfAnUnservedVersion(t *testing.T) {
	obj := decode(t, "apiVersion: example.com/v1old\nkind: Widget\nspec: {size: 1}")
	if _, err := load(t).MissingDefaults(obj); err == nil {
		t.Error("no error for a version the CRD does not serve")
	}
}

func TestLoad(t *testing.T) {
	crd := load(t)
	if crd.Group != "example.com" || crd.Kind != "Widget" || crd.Name != "widgets.example.com" {
		t.Errorf("loaded %s: group %q, kind %q", crd.Name, crd.Group, crd.Kind)
	}
	tests := map[string]string{
		"not a CRD":      "apiVersion: v1\nkind: ConfigMap\n",
		"unknown field":  "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {group: g, colour: red}\n",
		"no served one":  "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {group: g, versions: [{name: v1, served: false}]}\n",
		"no schema":      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {group: g, versions: [{name: v1, served: true}]}\n",
		"not structural": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {group: g, versions: [{name: v1, served: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {}}}}}]}\n",
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "crd.yaml")
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			if crd, err := crdcheck.Load(path); err == nil {
				t.Errorf("loaded %+v", crd)
			}
		})
	}
	if _, err := crdcheck.Load(filepath.Join("testdata", "absent.yaml")); err == nil {
		t.Error("no error for a missing file")
	}
}
