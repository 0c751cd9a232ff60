// Package crdschema checks rendered objects against the structural schema
// (openAPIV3Schema) of a CustomResourceDefinition, the way the API server
// would before storing them. It is a test helper: it needs only
// sigs.k8s.io/yaml, not the API server's validation stack.
//
// What it checks: apiVersion and kind against the CRD's served versions;
// every field declared (the API server prunes unknown fields, which shows up
// as drift that never converges); types (string, integer, number, boolean,
// object, array, x-kubernetes-int-or-string, additionalProperties maps);
// nulls on non-nullable fields (pruned too); enum; required; minimum and
// maximum; minItems and maxItems; minLength and maxLength; minProperties and
// maxProperties; pattern; uniqueness of x-kubernetes-list-type set and map
// lists; anyOf, allOf, oneOf and not. metadata at the root is checked as
// ObjectMeta (known fields, string maps for labels and annotations).
//
// What it does not check: x-kubernetes-validations. Those are CEL rules, and
// evaluating them needs the API server's CEL environment; the end-to-end
// suite, which applies the manifests to a real API server, covers them.
// Formats (date-time, int32, ...) are not checked either.
package crdschema

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// Schema is the subset of a JSON-Schema-Props the API server acts on.
type Schema struct {
	Type                 string             `json:"type,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	ExclusiveMinimum     bool               `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum     bool               `json:"exclusiveMaximum,omitempty"`
	MinItems             *int64             `json:"minItems,omitempty"`
	MaxItems             *int64             `json:"maxItems,omitempty"`
	MinLength            *int64             `json:"minLength,omitempty"`
	MaxLength            *int64             `json:"maxLength,omitempty"`
	MinProperties        *int64             `json:"minProperties,omitempty"`
	MaxProperties        *int64             `json:"maxProperties,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Nullable             bool               `json:"nullable,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`
	AllOf                []*Schema          `json:"allOf,omitempty"`
	OneOf                []*Schema          `json:"oneOf,omitempty"`
	Not                  *Schema            `json:"not,omitempty"`
	Default              any                `json:"default,omitempty"`

	IntOrString           bool     `json:"x-kubernetes-int-or-string,omitempty"`
	PreserveUnknownFields bool     `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	EmbeddedResource      bool     `json:"x-kubernetes-embedded-resource,omitempty"`
	ListType              string   `json:"x-kubernetes-list-type,omitempty"`
	ListMapKeys           []string `json:"x-kubernetes-list-map-keys,omitempty"`
	// Validations holds CEL rules; they are read but not evaluated.
	Validations []any `json:"x-kubernetes-validations,omitempty"`
}

// CRD is a loaded CustomResourceDefinition.
type CRD struct {
	Group    string
	Kind     string
	Versions map[string]*Schema // served versions only, by name
}

// crdFile is the part of a CRD manifest the checker reads.
type crdFile struct {
	Kind string `json:"kind"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
			Schema struct {
				OpenAPIV3Schema *Schema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// Load reads a CRD manifest (one YAML document; a leading "---" and comments
// are fine).
func Load(path string) (*CRD, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse reads a CRD from YAML.
func Parse(data []byte) (*CRD, error) {
	var f crdFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parse CRD: %w", err)
	}
	if f.Kind != "CustomResourceDefinition" {
		return nil, fmt.Errorf("parse CRD: kind is %q, not CustomResourceDefinition", f.Kind)
	}
	c := &CRD{Group: f.Spec.Group, Kind: f.Spec.Names.Kind, Versions: map[string]*Schema{}}
	for _, v := range f.Spec.Versions {
		if !v.Served {
			continue
		}
		if v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("parse CRD %s: version %s has no openAPIV3Schema", c.Kind, v.Name)
		}
		c.Versions[v.Name] = v.Schema.OpenAPIV3Schema
	}
	if len(c.Versions) == 0 {
		return nil, fmt.Errorf("parse CRD %s: no served version", c.Kind)
	}
	return c, nil
}

// MissingDefaults lists the fields the API server would add to the object
// when storing it: fields with a schema default that the object leaves out,
// inside objects it has (or that a default creates). Each is drift between
// what was rendered and what a GitOps tool reads back.
func (c *CRD) MissingDefaults(obj map[string]any) ([]string, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	_, version, _ := strings.Cut(apiVersion, "/")
	s, ok := c.Versions[version]
	if !ok {
		return nil, fmt.Errorf("version %q of %s is not served", version, c.Kind)
	}
	var out []string
	missingDefaults("", obj, s, &out)
	return out, nil
}

func missingDefaults(path string, x any, s *Schema, out *[]string) {
	switch x := x.(type) {
	case map[string]any:
		names := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			ps := s.Properties[k]
			if v, ok := x[k]; ok {
				missingDefaults(child(path, k), v, ps, out)
			} else if ps.Default != nil {
				*out = append(*out, child(path, k))
				// The API server defaults what its default creates, too.
				missingDefaults(child(path, k), ps.Default, ps, out)
			}
		}
		if s.AdditionalProperties != nil {
			for _, k := range sortedKeys(x) {
				if _, declared := s.Properties[k]; !declared {
					missingDefaults(child(path, k), x[k], s.AdditionalProperties, out)
				}
			}
		}
	case []any:
		if s.Items != nil {
			for i, e := range x {
				missingDefaults(fmt.Sprintf("%s[%d]", path, i), e, s.Items, out)
			}
		}
	}
}

// Violation is one way an object breaks the schema.
type Violation struct {
	Path    string // e.g. spec.resourceGroups[0].flavors[1].name
	Message string
}

func (v Violation) String() string { return v.Path + ": " + v.Message }

// Validate checks a whole object (as decoded from JSON or YAML into
// map[string]any) against the served version its apiVersion names.
func (c *CRD) Validate(obj map[string]any) []Violation {
	apiVersion, _ := obj["apiVersion"].(string)
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok || group != c.Group {
		return []Violation{{"apiVersion", fmt.Sprintf("%q is not in group %s", apiVersion, c.Group)}}
	}
	if kind, _ := obj["kind"].(string); kind != c.Kind {
		return []Violation{{"kind", fmt.Sprintf("%q is not %s", kind, c.Kind)}}
	}
	s, ok := c.Versions[version]
	if !ok {
		return []Violation{{"apiVersion", fmt.Sprintf("version %s of %s is not served (served: %s)", version, c.Kind, strings.Join(c.served(), ", "))}}
	}
	v := &validator{}
	v.value("", obj, s, true)
	return v.out
}

func (c *CRD) served() []string {
	var out []string
	for name := range c.Versions {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Validate checks a value against the schema alone.
func (s *Schema) Validate(value any) []Violation {
	v := &validator{}
	v.value("", value, s, false)
	return v.out
}

type validator struct {
	out []Violation
}

func (v *validator) fail(path, format string, args ...any) {
	if path == "" {
		path = "<root>"
	}
	v.out = append(v.out, Violation{path, fmt.Sprintf(format, args...)})
}

func child(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// value checks one value; root is true for the object itself, whose metadata
// the API server validates as ObjectMeta whatever the schema says.
func (v *validator) value(path string, x any, s *Schema, root bool) {
	if x == nil {
		if !s.Nullable {
			v.fail(path, "null is not allowed here (the API server prunes it)")
		}
		return
	}
	if !v.typ(path, x, s) {
		return
	}
	v.enum(path, x, s)
	v.bounds(path, x, s)
	for i, sub := range s.AllOf {
		if errs := sub.Validate(x); len(errs) > 0 {
			v.fail(path, "does not match allOf[%d]: %s", i, errs[0])
		}
	}
	if len(s.AnyOf) > 0 {
		matched := false
		for _, sub := range s.AnyOf {
			if len(sub.Validate(x)) == 0 {
				matched = true
				break
			}
		}
		if !matched {
			v.fail(path, "matches none of anyOf")
		}
	}
	if len(s.OneOf) > 0 {
		n := 0
		for _, sub := range s.OneOf {
			if len(sub.Validate(x)) == 0 {
				n++
			}
		}
		if n != 1 {
			v.fail(path, "matches %d of oneOf, not exactly one", n)
		}
	}
	if s.Not != nil && len(s.Not.Validate(x)) == 0 {
		v.fail(path, "matches a schema it must not match")
	}

	switch x := x.(type) {
	case map[string]any:
		v.object(path, x, s, root)
	case []any:
		v.array(path, x, s)
	}
}

// typ checks the type and reports whether the value's content is worth
// checking further.
func (v *validator) typ(path string, x any, s *Schema) bool {
	if s.IntOrString {
		if _, ok := x.(string); ok {
			return true
		}
		if isInteger(x) {
			return true
		}
		v.fail(path, "must be an integer or a string, not %s", describe(x))
		return false
	}
	ok := true
	switch s.Type {
	case "":
		// No type: anyOf/allOf branches, or a preserve-unknown-fields value.
	case "string":
		_, ok = x.(string)
	case "boolean":
		_, ok = x.(bool)
	case "integer":
		ok = isInteger(x)
	case "number":
		_, ok = number(x)
	case "object":
		_, ok = x.(map[string]any)
	case "array":
		_, ok = x.([]any)
	default:
		v.fail(path, "the schema has an unknown type %q", s.Type)
		return false
	}
	if !ok {
		v.fail(path, "must be of type %s, not %s", s.Type, describe(x))
	}
	return ok
}

func (v *validator) enum(path string, x any, s *Schema) {
	if len(s.Enum) == 0 {
		return
	}
	for _, e := range s.Enum {
		if equal(e, x) {
			return
		}
	}
	var allowed []string
	for _, e := range s.Enum {
		allowed = append(allowed, fmt.Sprint(e))
	}
	v.fail(path, "%v is not one of %s", x, strings.Join(allowed, ", "))
}

func (v *validator) bounds(path string, x any, s *Schema) {
	if str, ok := x.(string); ok {
		// Kubernetes counts characters, not bytes.
		n := int64(utf8.RuneCountInString(str))
		if s.MinLength != nil && n < *s.MinLength {
			v.fail(path, "%q is shorter than %d characters", str, *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			v.fail(path, "is %d characters long, more than %d", n, *s.MaxLength)
		}
		if s.Pattern != "" {
			re, err := compile(s.Pattern)
			if err != nil {
				v.fail(path, "the schema's pattern %q does not compile in Go: %v", s.Pattern, err)
			} else if !re.MatchString(str) {
				v.fail(path, "%q does not match %s", str, s.Pattern)
			}
		}
		return
	}
	if n, ok := number(x); ok {
		if m := s.Minimum; m != nil && (n < *m || s.ExclusiveMinimum && n == *m) {
			v.fail(path, "%v is below the minimum %v", n, *m)
		}
		if m := s.Maximum; m != nil && (n > *m || s.ExclusiveMaximum && n == *m) {
			v.fail(path, "%v is above the maximum %v", n, *m)
		}
	}
}

// patterns caches compiled patterns: a CRD has few, and large renderings
// check them thousands of times.
var patterns sync.Map // pattern → *regexp.Regexp or error

func compile(pattern string) (*regexp.Regexp, error) {
	if c, ok := patterns.Load(pattern); ok {
		if re, ok := c.(*regexp.Regexp); ok {
			return re, nil
		}
		return nil, c.(error)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		patterns.Store(pattern, err)
		return nil, err
	}
	patterns.Store(pattern, re)
	return re, nil
}

func (v *validator) object(path string, m map[string]any, s *Schema, root bool) {
	n := int64(len(m))
	if s.MinProperties != nil && n < *s.MinProperties {
		v.fail(path, "has %d properties, fewer than %d", n, *s.MinProperties)
	}
	if s.MaxProperties != nil && n > *s.MaxProperties {
		v.fail(path, "has %d properties, more than %d", n, *s.MaxProperties)
	}
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			v.fail(child(path, r), "is required")
		}
	}
	for _, k := range sortedKeys(m) {
		p := child(path, k)
		if (root || s.EmbeddedResource) && k == "metadata" {
			v.metadata(p, m[k])
			continue
		}
		if (root || s.EmbeddedResource) && (k == "apiVersion" || k == "kind") {
			if _, ok := m[k].(string); !ok {
				v.fail(p, "must be a string")
			}
			continue
		}
		if ps, ok := s.Properties[k]; ok {
			v.value(p, m[k], ps, false)
			continue
		}
		if s.AdditionalProperties != nil {
			v.value(p, m[k], s.AdditionalProperties, false)
			continue
		}
		if s.PreserveUnknownFields {
			continue
		}
		if s.Type == "object" || len(s.Properties) > 0 {
			v.fail(p, "unknown field: the API server would prune it")
		}
	}
}

func (v *validator) array(path string, a []any, s *Schema) {
	n := int64(len(a))
	if s.MinItems != nil && n < *s.MinItems {
		v.fail(path, "has %d items, fewer than %d", n, *s.MinItems)
	}
	if s.MaxItems != nil && n > *s.MaxItems {
		v.fail(path, "has %d items, more than %d", n, *s.MaxItems)
	}
	if s.Items != nil {
		for i, e := range a {
			v.value(fmt.Sprintf("%s[%d]", path, i), e, s.Items, false)
		}
	}
	switch s.ListType {
	case "set":
		for i := range a {
			for j := 0; j < i; j++ {
				if equal(a[i], a[j]) {
					v.fail(fmt.Sprintf("%s[%d]", path, i), "duplicates item %d of a set", j)
				}
			}
		}
	case "map":
		seen := map[string]int{}
		for i, e := range a {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			var key []string
			for _, k := range s.ListMapKeys {
				key = append(key, fmt.Sprint(m[k]))
			}
			id := strings.Join(key, "\x00")
			if j, dup := seen[id]; dup {
				v.fail(fmt.Sprintf("%s[%d]", path, i), "duplicates the keys %s of item %d", strings.Join(s.ListMapKeys, ","), j)
			}
			seen[id] = i
		}
	}
}

// objectMetaFields are the fields of metav1.ObjectMeta a client may send.
var objectMetaFields = map[string]string{
	"name": "string", "generateName": "string", "namespace": "string", "uid": "string",
	"resourceVersion": "string", "generation": "integer", "creationTimestamp": "string",
	"deletionTimestamp": "string", "deletionGracePeriodSeconds": "integer",
	"labels": "map", "annotations": "map", "ownerReferences": "array", "finalizers": "array",
	"managedFields": "array", "selfLink": "string",
}

// metadata checks the root metadata as the API server does: as ObjectMeta,
// not by the CRD's schema (which only says "type: object").
func (v *validator) metadata(path string, x any) {
	m, ok := x.(map[string]any)
	if !ok {
		v.fail(path, "must be an object, not %s", describe(x))
		return
	}
	for _, k := range sortedKeys(m) {
		p := child(path, k)
		kind, known := objectMetaFields[k]
		switch {
		case !known:
			v.fail(p, "unknown field of ObjectMeta: the API server would drop it")
		case kind == "string":
			if _, ok := m[k].(string); !ok {
				v.fail(p, "must be a string, not %s", describe(m[k]))
			}
		case kind == "integer":
			if !isInteger(m[k]) {
				v.fail(p, "must be an integer, not %s", describe(m[k]))
			}
		case kind == "array":
			if _, ok := m[k].([]any); !ok {
				v.fail(p, "must be an array, not %s", describe(m[k]))
			}
		case kind == "map":
			mm, ok := m[k].(map[string]any)
			if !ok {
				v.fail(p, "must be a map of strings, not %s", describe(m[k]))
				continue
			}
			for _, kk := range sortedKeys(mm) {
				if _, ok := mm[kk].(string); !ok {
					v.fail(child(p, kk), "must be a string, not %s", describe(mm[kk]))
				}
			}
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// number returns a JSON number in any of the forms decoders produce.
func number(x any) (float64, bool) {
	switch n := x.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func isInteger(x any) bool {
	switch n := x.(type) {
	case int, int32, int64:
		return true
	case json.Number:
		_, err := strconv.ParseInt(n.String(), 10, 64)
		return err == nil
	}
	f, ok := number(x)
	return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
}

// equal compares JSON values, numbers by value whatever their Go type.
func equal(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func describe(x any) string {
	switch x.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case nil:
		return "null"
	}
	if isInteger(x) {
		return "an integer"
	}
	if _, ok := number(x); ok {
		return "a number"
	}
	return fmt.Sprintf("a %T", x)
}
