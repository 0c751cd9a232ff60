package kustomize

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	validationErrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/tenancy-dev/tenancy/generator"
)

// APIVersion and Kind identify the function's configuration object, the
// TenancyGenerator a kustomization lists under generators:.
const (
	APIVersion = "tenancy.dev/v1alpha1"
	Kind       = "TenancyGenerator"
)

// Spec is the TenancyGenerator's spec: where the agreement is and what to
// render it for. Exactly one of File and Agreement is set.
type Spec struct {
	// File is the agreement's path relative to the kustomization directory;
	// it may not leave that directory.
	File string `json:"file,omitempty" yaml:"file,omitempty"`
	// Agreement is the agreement's TOML inline.
	Agreement string `json:"agreement,omitempty" yaml:"agreement,omitempty"`
	// Backend is kueue or kai; empty: the agreement's backend key chooses
	// (its first backend; kueue without the key). A backend the key does
	// not name is refused at the key.
	Backend string `json:"backend,omitempty" yaml:"backend,omitempty"`
	// KueueAPI is v1beta2 (the default) or v1beta1.
	KueueAPI string `json:"kueueAPI,omitempty" yaml:"kueueAPI,omitempty"`
	// Cluster is the part of a fleet agreement (one with [clusters]) to
	// render: the manager's or a worker cluster's name. A fleet agreement
	// refuses an empty one, naming its parts; an agreement without
	// [clusters] refuses a non-empty one.
	Cluster string `json:"cluster,omitempty" yaml:"cluster,omitempty"`
}

// Config is the decoded functionConfig.
type Config struct {
	// Ref names the TenancyGenerator object, for messages and result references.
	Ref yaml.ResourceIdentifier
	// Path is the file kustomize read the TenancyGenerator from, when the
	// input says so; empty otherwise.
	Path string
	Spec Spec
	// Options are Spec.Backend, Spec.KueueAPI and Spec.Cluster, normalized.
	Options generator.Options
}

// name is how messages call the functionConfig: kind/name, as written.
func (c *Config) name() string {
	kind := c.Ref.Kind
	if kind == "" {
		kind = Kind
	}
	if c.Ref.Name == "" {
		return kind
	}
	return kind + "/" + c.Ref.Name
}

// decodeConfig reads the functionConfig strictly: a wrong kind, an unknown
// field or a value of the wrong type is an error, because a typo such as
// "bakend: kai" must not quietly render the defaults. Every problem is
// reported at once, each as a result with its field.
//
// kyaml's framework.LoadFunctionConfig does the work: tenancyGenerator's
// Schema rejects unknown fields and wrong types (all of them, not the first),
// its Validate the values that do not go together. What stays here is the
// object's identity (a wrong kind is reported even when the spec is broken
// too) and the wording and order of the results.
func decodeConfig(node *yaml.RNode) (*Config, framework.Results) {
	if node == nil || node.IsNilOrEmpty() {
		return nil, framework.Results{{
			Severity: framework.Error,
			Message: fmt.Sprintf("no functionConfig in the input: expected a %s %s (kustomize passes the object listed under generators:)",
				APIVersion, Kind),
		}}
	}
	c := &Config{}
	if meta, err := node.GetMeta(); err == nil {
		c.Ref = meta.GetIdentifier()
	}
	c.Path, _, _ = kioutil.GetFileAnnotations(node)

	if node.YNode().Kind != yaml.MappingNode {
		return nil, framework.Results{c.result("", "the functionConfig must be a YAML mapping")}
	}
	var problems framework.Results
	if c.Ref.APIVersion != APIVersion || c.Ref.Kind != Kind {
		problems = append(problems, c.result("", fmt.Sprintf("the functionConfig is a %s %s; this function takes a %s %s",
			orNone(c.Ref.APIVersion), orNone(c.Ref.Kind), APIVersion, Kind)))
	}
	var g tenancyGenerator
	if err := framework.LoadFunctionConfig(node, &g); err != nil {
		problems = append(problems, c.loadResults(node, err)...)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	c.Spec = Spec{File: deref(g.Spec.File), Agreement: deref(g.Spec.Agreement), Backend: g.Spec.Backend, KueueAPI: g.Spec.KueueAPI, Cluster: g.Spec.Cluster}
	opts := generator.Options{Backend: generator.Backend(c.Spec.Backend), KueueAPI: c.Spec.KueueAPI, Cluster: c.Spec.Cluster}
	if opts.Backend != "" {
		// The refusal of a backend the agreement does not name says who asked.
		opts.BackendFrom = c.name() + " spec.backend"
	}
	// Likewise a cluster the agreement has no part for, and a fleet
	// agreement without one (named even when unset: it says what to add).
	// The refusal is a result, which names the functionConfig already.
	opts.ClusterFrom = clusterField
	opts, err := opts.Normalize()
	if err != nil { // unreachable after Validate; kept so a new option cannot slip through
		return nil, framework.Results{c.result("spec", err.Error())}
	}
	c.Options = opts
	return c, nil
}

// clusterField is the field choosing a fleet's part.
const clusterField = "spec.cluster"

// tenancyGenerator is the functionConfig as LoadFunctionConfig decodes it.
// File and Agreement are pointers because set-but-empty and absent are
// different mistakes.
type tenancyGenerator struct {
	Spec *struct {
		File      *string `json:"file"`
		Agreement *string `json:"agreement"`
		Backend   string  `json:"backend"`
		KueueAPI  string  `json:"kueueAPI"`
		Cluster   string  `json:"cluster"`
	} `json:"spec"`
}

// Schema implements framework.ValidationSchemaProvider: the fields a
// TenancyGenerator has, each with its type, and no others.
func (tenancyGenerator) Schema() (*spec.Schema, error) {
	str := *spec.StringProperty()
	closed := func(props map[string]spec.Schema) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{
			Type:                 spec.StringOrArray{"object"},
			Properties:           props,
			AdditionalProperties: &spec.SchemaOrBool{Allows: false},
		}}
	}
	specSchema := closed(map[string]spec.Schema{"file": str, "agreement": str, "backend": str, "kueueAPI": str, "cluster": str})
	specSchema.Nullable = true // a missing spec is Validate's to explain
	root := closed(map[string]spec.Schema{
		"apiVersion": str,
		"kind":       str,
		"metadata":   {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}},
		"spec":       specSchema,
	})
	return &root, nil
}

// Validate implements framework.Validator: what the schema cannot say, each
// problem pinned to its own field.
func (g *tenancyGenerator) Validate() error {
	if g.Spec == nil {
		return fieldProblem("spec", "missing; set spec.file (a path relative to the kustomization) or spec.agreement (the TOML inline)")
	}
	var errs []error
	s := g.Spec
	switch {
	case s.File != nil && s.Agreement != nil:
		errs = append(errs, fieldProblem("spec", "set either spec.file or spec.agreement, not both"))
	case s.File == nil && s.Agreement == nil:
		errs = append(errs, fieldProblem("spec", "set spec.file (a path relative to the kustomization) or spec.agreement (the TOML inline)"))
	case s.File != nil && *s.File == "":
		errs = append(errs, fieldProblem("spec.file", "is empty"))
	case s.Agreement != nil && strings.TrimSpace(*s.Agreement) == "":
		errs = append(errs, fieldProblem("spec.agreement", "is empty"))
	}
	if len(deref(s.Agreement)) > generator.MaxAgreementSize {
		errs = append(errs, fieldProblem("spec.agreement", generator.ErrTooLarge.Error()))
	}
	// Normalize each option alone so a problem is pinned to its own field.
	if _, err := (generator.Options{Backend: generator.Backend(s.Backend)}).Normalize(); err != nil {
		errs = append(errs, fieldProblem("spec.backend", fmt.Sprintf("%q: must be kueue or kai", s.Backend)))
	}
	if _, err := (generator.Options{KueueAPI: s.KueueAPI}).Normalize(); err != nil {
		errs = append(errs, fieldProblem("spec.kueueAPI", fmt.Sprintf("%q: must be v1beta2 or v1beta1", s.KueueAPI)))
	}
	if len(errs) == 0 {
		return nil
	}
	return validationErrors.CompositeValidationError(errs...)
}

// problem is one of Validate's errors: a message about a field.
type problem struct{ field, msg string }

func (p *problem) Error() string { return p.field + ": " + p.msg }

func fieldProblem(field, msg string) error { return &problem{field, msg} }

// loadResults turns LoadFunctionConfig's error into one result per problem:
// the schema's (unknown fields, wrong types) in the order they appear in the
// YAML, then Validate's.
func (c *Config) loadResults(node *yaml.RNode, err error) framework.Results {
	all := flatten(err)
	type located struct {
		line, col int
		r         *framework.Result
	}
	var schema []located
	var rs framework.Results
	for _, e := range all {
		var p *problem
		var v *validationErrors.Validation
		switch {
		case errors.As(e, &p):
			rs = append(rs, c.result(p.field, p.msg))
		case errors.As(e, &v):
			field, msg := schemaProblem(v)
			line, col := position(node, field)
			schema = append(schema, located{line, col, c.result(field, msg)})
		default:
			rs = append(rs, c.result("", e.Error()))
		}
	}
	sort.SliceStable(schema, func(i, j int) bool {
		if schema[i].line != schema[j].line {
			return schema[i].line < schema[j].line
		}
		return schema[i].col < schema[j].col
	})
	out := make(framework.Results, 0, len(schema)+len(rs))
	for _, l := range schema {
		out = append(out, l.r)
	}
	return append(out, rs...)
}

// schemaProblem words a schema violation as the README and the golden
// tests do: the field, and what is wrong with it.
func schemaProblem(v *validationErrors.Validation) (field, msg string) {
	field = v.Name
	switch v.Code() {
	case validationErrors.UnallowedPropertyCode:
		key, _ := v.Value.(string)
		if field == "" {
			return key, fmt.Sprintf("unknown field; a %s has %s", Kind, strings.Join(knownFields(""), ", "))
		}
		return field + "." + key, fmt.Sprintf("unknown field; %s has %s", field, strings.Join(knownFields(field), ", "))
	case validationErrors.InvalidTypeCode:
		if schemaAt(field).Type.Contains("object") {
			return field, "must be a mapping"
		}
		return field, "must be a string"
	}
	return field, v.Error()
}

// flatten lists the problems in LoadFunctionConfig's error: it nests the
// schema's CompositeError, wrapped, inside the one that adds Validate's.
func flatten(err error) []error {
	var composite *validationErrors.CompositeError
	if !errors.As(err, &composite) {
		return []error{err}
	}
	var out []error
	for _, e := range composite.Errors {
		out = append(out, flatten(e)...)
	}
	return out
}

// schemaAt is the schema of the field at path ("" for the whole object).
func schemaAt(path string) *spec.Schema {
	s, _ := tenancyGenerator{}.Schema()
	if path != "" {
		for _, name := range strings.Split(path, ".") {
			child := s.Properties[name]
			s = &child
		}
	}
	return s
}

// knownFields lists the fields the schema allows at path, sorted.
func knownFields(path string) []string {
	names := slices.Collect(maps.Keys(schemaAt(path).Properties))
	slices.Sort(names)
	return names
}

// position is where field's key is in the functionConfig, for ordering;
// 0, 0 when it is not there.
func position(node *yaml.RNode, field string) (line, col int) {
	path := strings.Split(field, ".")
	parent := node
	if len(path) > 1 {
		var err error
		if parent, err = node.Pipe(yaml.Lookup(path[:len(path)-1]...)); err != nil || parent == nil {
			return 0, 0
		}
	}
	f := parent.Field(path[len(path)-1])
	if f == nil {
		return 0, 0
	}
	return f.Key.YNode().Line, f.Key.YNode().Column
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// result is an error about the functionConfig itself, at field (may be empty).
func (c *Config) result(field, msg string) *framework.Result {
	r := &framework.Result{Severity: framework.Error, ResourceRef: c.ref()}
	if field != "" {
		r.Field = &framework.Field{Path: field}
		msg = field + ": " + msg
	}
	r.Message = c.name() + ": " + msg
	if c.Path != "" {
		r.File = &framework.File{Path: c.Path}
	}
	return r
}

func (c *Config) ref() *yaml.ResourceIdentifier {
	if c.Ref.Kind == "" && c.Ref.Name == "" {
		return nil
	}
	ref := c.Ref
	return &ref
}

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
