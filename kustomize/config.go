package kustomize

import (
	"fmt"
	"slices"
	"strings"

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
	// Backend is kueue (the default) or kai.
	Backend string `json:"backend,omitempty" yaml:"backend,omitempty"`
	// KueueAPI is v1beta2 (the default) or v1beta1.
	KueueAPI string `json:"kueueAPI,omitempty" yaml:"kueueAPI,omitempty"`
}

// Config is the decoded functionConfig.
type Config struct {
	// Ref names the TenancyGenerator object, for messages and result references.
	Ref yaml.ResourceIdentifier
	// Path is the file kustomize read the TenancyGenerator from, when the
	// input says so; empty otherwise.
	Path string
	Spec Spec
	// Options are Spec.Backend and Spec.KueueAPI, normalized.
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

var (
	topLevelFields = []string{"apiVersion", "kind", "metadata", "spec"}
	specFields     = []string{"agreement", "backend", "file", "kueueAPI"}
)

// decodeConfig reads the functionConfig strictly: a wrong kind, an unknown
// field or a value of the wrong type is an error, because a typo such as
// "bakend: kai" must not quietly render the defaults. Every problem is
// reported at once.
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

	var problems framework.Results
	fail := func(field, format string, args ...any) {
		problems = append(problems, c.result(field, fmt.Sprintf(format, args...)))
	}
	if node.YNode().Kind != yaml.MappingNode {
		fail("", "the functionConfig must be a YAML mapping")
		return nil, problems
	}
	if c.Ref.APIVersion != APIVersion || c.Ref.Kind != Kind {
		fail("", "the functionConfig is a %s %s; this function takes a %s %s",
			orNone(c.Ref.APIVersion), orNone(c.Ref.Kind), APIVersion, Kind)
	}
	for _, f := range unknownFields(node, topLevelFields) {
		fail(f, "unknown field; a %s has %s", Kind, strings.Join(topLevelFields, ", "))
	}

	spec := node.Field("spec")
	if spec == nil || spec.Value.IsNil() {
		fail("spec", "missing; set spec.file (a path relative to the kustomization) or spec.agreement (the TOML inline)")
		return nil, problems
	}
	if spec.Value.YNode().Kind != yaml.MappingNode {
		fail("spec", "must be a mapping")
		return nil, problems
	}
	for _, f := range unknownFields(spec.Value, specFields) {
		fail("spec."+f, "unknown field; spec has %s", strings.Join(specFields, ", "))
	}
	// str reads a string field; ok is false when it is present with another type.
	str := func(name string, dst *string) (ok bool) {
		f := spec.Value.Field(name)
		if f == nil || f.Value.IsNil() {
			return true
		}
		y := f.Value.YNode()
		if y.Kind != yaml.ScalarNode || y.ShortTag() != yaml.NodeTagString {
			fail("spec."+name, "must be a string")
			return false
		}
		*dst = y.Value
		return true
	}
	fileOK := str("file", &c.Spec.File)
	agreementOK := str("agreement", &c.Spec.Agreement)
	str("backend", &c.Spec.Backend)
	str("kueueAPI", &c.Spec.KueueAPI)

	hasFile, hasAgreement := spec.Value.Field("file") != nil, spec.Value.Field("agreement") != nil
	switch {
	case hasFile && hasAgreement:
		fail("spec", "set either spec.file or spec.agreement, not both")
	case !hasFile && !hasAgreement:
		fail("spec", "set spec.file (a path relative to the kustomization) or spec.agreement (the TOML inline)")
	case hasFile && fileOK && c.Spec.File == "":
		fail("spec.file", "is empty")
	case hasAgreement && agreementOK && strings.TrimSpace(c.Spec.Agreement) == "":
		fail("spec.agreement", "is empty")
	}
	if len(c.Spec.Agreement) > generator.MaxAgreementSize {
		fail("spec.agreement", "%v", generator.ErrTooLarge)
	}

	// Normalize each option alone so a problem is pinned to its own field;
	// the options are the normalized values.
	backend, err := (generator.Options{Backend: generator.Backend(c.Spec.Backend)}).Normalize()
	if err != nil {
		fail("spec.backend", "%q: must be kueue or kai", c.Spec.Backend)
	}
	api, err := (generator.Options{KueueAPI: c.Spec.KueueAPI}).Normalize()
	if err != nil {
		fail("spec.kueueAPI", "%q: must be v1beta2 or v1beta1", c.Spec.KueueAPI)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	c.Options = generator.Options{Backend: backend.Backend, KueueAPI: api.KueueAPI}
	return c, nil
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

func unknownFields(m *yaml.RNode, known []string) []string {
	var unknown []string
	content := m.YNode().Content
	for i := 0; i+1 < len(content); i += 2 {
		if k := content[i].Value; !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	return unknown
}

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
