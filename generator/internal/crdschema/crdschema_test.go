package crdschema_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator/internal/crdschema"
)

// widgetCRD exercises every keyword the checker acts on.
const widgetCRD = `
# a comment, as generated CRDs have
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
  versions:
  - name: v1old
    served: false
    schema:
      openAPIV3Schema:
        type: object
  - name: v1
    served: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - rule: self.size > 0
            properties:
              size: {type: integer, minimum: 0, maximum: 10}
              ratio: {type: number}
              enabled: {type: boolean}
              mode: {type: string, enum: [Fast, Slow], default: Fast}
              name: {type: string, minLength: 1, maxLength: 5, pattern: '^[a-z]+$'}
              quantity:
                anyOf: [{type: integer}, {type: string}]
                x-kubernetes-int-or-string: true
                pattern: '^[0-9]+$'
              tags:
                type: array
                maxItems: 2
                minItems: 1
                x-kubernetes-list-type: set
                items: {type: string}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  properties:
                    name: {type: string}
              labels:
                type: object
                maxProperties: 2
                additionalProperties: {type: string}
              opaque:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              maybe: {type: string, nullable: true}
              nested:
                type: object
                default: {}
                properties:
                  policy: {type: string, default: Never}
`

func load(t *testing.T) *crdschema.CRD {
	t.Helper()
	crd, err := crdschema.Parse([]byte(widgetCRD))
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

func TestValidate(t *testing.T) {
	const head = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, labels: {a: b}}\n"
	tests := map[string]struct {
		doc  string
		want []string
	}{
		"valid": {
			doc: head + `spec: {size: 3, ratio: 0.5, enabled: true, mode: Slow, name: abc, quantity: "12",
  tags: [x, z], ports: [{name: a}, {name: b}], labels: {k: v}, opaque: {anything: [1]}, maybe: null, nested: {policy: Never}}`,
		},
		"int-or-string takes an integer": {doc: head + "spec: {size: 1, quantity: 12}"},
		"unknown field": {
			doc:  head + "spec: {size: 1, colour: red}",
			want: []string{"spec.colour: unknown field: the API server would prune it"},
		},
		"unknown field in a list item": {
			doc:  head + "spec: {size: 1, ports: [{name: a, port: 80}]}",
			want: []string{"spec.ports[0].port: unknown field: the API server would prune it"},
		},
		"unknown root field": {
			doc:  head + "spec: {size: 1}\nstatus: {}",
			want: []string{"status: unknown field: the API server would prune it"},
		},
		"unknown metadata field": {
			doc:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, label: {a: b}}\nspec: {size: 1}",
			want: []string{"metadata.label: unknown field of ObjectMeta: the API server would drop it"},
		},
		"label value not a string": {
			doc:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, labels: {a: 1}}\nspec: {size: 1}",
			want: []string{"metadata.labels.a: must be a string, not an integer"},
		},
		"types": {
			doc: head + `spec: {size: "1", ratio: x, enabled: "true", name: 5, tags: a, labels: [], quantity: 1.5}`,
			want: []string{
				"spec.enabled: must be of type boolean, not a string",
				"spec.labels: must be of type object, not an array",
				"spec.name: must be of type string, not an integer",
				"spec.quantity: must be an integer or a string, not a number",
				"spec.ratio: must be of type number, not a string",
				"spec.size: must be of type integer, not a string",
				"spec.tags: must be of type array, not a string",
			},
		},
		"integer must be whole": {
			doc:  head + "spec: {size: 1.5}",
			want: []string{"spec.size: must be of type integer, not a number"},
		},
		"required": {
			doc:  head + "spec: {}",
			want: []string{"spec.size: is required"},
		},
		"bounds": {
			doc: head + `spec: {size: 11, name: toolong, tags: [a, b, c], labels: {a: x, b: w, c: z}}`,
			want: []string{
				"spec.labels: has 3 properties, more than 2",
				"spec.name: is 7 characters long, more than 5",
				"spec.size: 11 is above the maximum 10",
				"spec.tags: has 3 items, more than 2",
			},
		},
		"minimums": {
			doc: head + `spec: {size: -1, name: "", tags: []}`,
			want: []string{
				`spec.name: "" is shorter than 1 characters`,
				`spec.name: "" does not match ^[a-z]+$`,
				"spec.size: -1 is below the minimum 0",
				"spec.tags: has 0 items, fewer than 1",
			},
		},
		"enum": {
			doc:  head + "spec: {size: 1, mode: Medium}",
			want: []string{"spec.mode: Medium is not one of Fast, Slow"},
		},
		"pattern on int-or-string applies to strings": {
			doc:  head + `spec: {size: 1, quantity: "12k"}`,
			want: []string{`spec.quantity: "12k" does not match ^[0-9]+$`},
		},
		"null where not nullable": {
			doc:  head + "spec: {size: 1, name: null}",
			want: []string{"spec.name: null is not allowed here (the API server prunes it)"},
		},
		"duplicates in a set and a map list": {
			doc: head + "spec: {size: 1, tags: [a, a], ports: [{name: p}, {name: p}]}",
			want: []string{
				"spec.ports[1]: duplicates the keys name of item 0",
				"spec.tags[1]: duplicates item 0 of a set",
			},
		},
		"version not served": {
			doc:  "apiVersion: example.com/v1old\nkind: Widget\nspec: {size: 1}",
			want: []string{"apiVersion: version v1old of Widget is not served (served: v1)"},
		},
		"other group": {
			doc:  "apiVersion: other.com/v1\nkind: Widget\nspec: {size: 1}",
			want: []string{`apiVersion: "other.com/v1" is not in group example.com`},
		},
		"other kind": {
			doc:  "apiVersion: example.com/v1\nkind: Gadget\nspec: {size: 1}",
			want: []string{`kind: "Gadget" is not Widget`},
		},
	}
	crd := load(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, v := range crd.Validate(decode(t, tc.doc)) {
				got = append(got, v.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("violations (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestMissingDefaults(t *testing.T) {
	tests := map[string]struct {
		spec string
		want []string
	}{
		"all written out":      {spec: "{size: 1, mode: Fast, nested: {policy: Never}}"},
		"field with a default": {spec: "{size: 1, nested: {policy: Never}}", want: []string{"spec.mode"}},
		"object with a default, then its fields' defaults": {
			spec: "{size: 1, mode: Fast}",
			want: []string{"spec.nested", "spec.nested.policy"},
		},
		"nested default": {spec: "{size: 1, mode: Fast, nested: {}}", want: []string{"spec.nested.policy"}},
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

func TestParseRejectsOtherKinds(t *testing.T) {
	if _, err := crdschema.Parse([]byte("apiVersion: v1\nkind: ConfigMap\n")); err == nil {
		t.Error("a ConfigMap parsed as a CRD")
	}
}
