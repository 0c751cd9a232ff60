// Package crdcheck checks rendered custom resources against a
// CustomResourceDefinition the way the API server would on create, with no
// API server: it runs the API server's own validators from
// k8s.io/apiextensions-apiserver, offline. It is a test helper.
//
// For an object, Validate does what the API server does between decoding a
// create request and storing it:
//
//   - apiVersion and kind must name a served version of the CRD;
//   - root metadata is decoded strictly as ObjectMeta (objectmeta package);
//   - unknown fields are pruned (pruning package) and non-nullable nulls
//     without a default are dropped; each is reported, because a field the
//     API server drops shows up in Argo CD as drift that never converges;
//   - defaults are applied (defaulting package), so validation sees what the
//     API server validates;
//   - then the API server's own custom resource strategy
//     (registry/customresource.NewStrategy, built from the CRD as the API
//     server's CRD handler builds it) prepares the object for create, which
//     drops status when the CRD has a status subresource (reported, like a
//     pruned field), and validates it: apiVersion and kind, ObjectMeta (name,
//     namespace, labels, annotations, as for every object), the OpenAPI
//     schema, the scale subresource, embedded resources' metadata, list-type
//     set and map uniqueness and the x-kubernetes-validations CEL rules,
//     skipped as the API server skips them after a blocking error.
//
// MissingDefaults lists what the defaulting step would add: the project
// writes server defaults out, so that what it renders is what Argo CD reads
// back.
package crdcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// CRD is a loaded CustomResourceDefinition, with the API server's
// validators built for each served version.
type CRD struct {
	Name  string // e.g. clusterqueues.kueue.x-k8s.io
	Group string
	Kind  string

	versions map[string]*version // served versions only, by name
}

// version holds what the API server builds for one served version.
type version struct {
	// structural is the structural schema with its defaults pruned, the one
	// the API server prunes, defaults and runs CEL rules with.
	structural *structuralschema.Structural
	// strategy is the API server's create strategy for the version.
	strategy createStrategy
}

// createStrategy is what Validate uses of the API server's custom resource
// strategy (customresource.NewStrategy returns an unexported type).
type createStrategy interface {
	PrepareForCreate(ctx context.Context, obj runtime.Object)
	Validate(ctx context.Context, obj runtime.Object) field.ErrorList
}

// Load reads a CRD manifest: one apiextensions.k8s.io/v1
// CustomResourceDefinition (a leading "---" and comments are fine).
func Load(path string) (*CRD, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load CRD: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load CRD %s: %w", path, err)
	}
	return c, nil
}

// Parse reads a CRD from YAML and builds the validators of its served
// versions.
func Parse(data []byte) (*CRD, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	// Strict, so that a CRD file damaged or from an unexpected API version
	// fails here rather than validating against half a schema.
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return nil, fmt.Errorf("parse CRD: %w", err)
	}
	if gv := apiextensionsv1.SchemeGroupVersion.String(); crd.Kind != "CustomResourceDefinition" || crd.APIVersion != gv {
		return nil, fmt.Errorf("parse CRD: %s %s is not a %s CustomResourceDefinition", crd.APIVersion, crd.Kind, gv)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&crd)
	c := &CRD{Name: crd.Name, Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind, versions: map[string]*version{}}
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gvk := schema.GroupVersionKind{Group: c.Group, Version: v.Name, Kind: c.Kind}
		ver, err := newVersion(gvk, crd.Spec.Scope == apiextensionsv1.NamespaceScoped, v)
		if err != nil {
			return nil, fmt.Errorf("CRD %s, version %s: %w", c.Name, v.Name, err)
		}
		c.versions[v.Name] = ver
	}
	if len(c.versions) == 0 {
		return nil, fmt.Errorf("CRD %s: no served version", c.Name)
	}
	return c, nil
}

// newVersion builds the validators as the API server's CRD handler does:
// the v1 schema converted to the internal type, its structural form with
// the defaults pruned, the OpenAPI validators of the object and of its
// status, the subresources, and from them the custom resource strategy.
func newVersion(gvk schema.GroupVersionKind, namespaced bool, v apiextensionsv1.CustomResourceDefinitionVersion) (*version, error) {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("no openAPIV3Schema")
	}
	var internal apiextensions.CustomResourceValidation
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, &internal, nil); err != nil {
		return nil, fmt.Errorf("convert the schema to the internal type: %w", err)
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("not a structural schema: %w", err)
	}
	// The API server refuses a CRD whose schema breaks these invariants.
	if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), s); len(errs) > 0 {
		return nil, fmt.Errorf("not a structural schema: %w", errs.ToAggregate())
	}
	s = s.DeepCopy() // PruneDefaults edits defaults NewStructural shares with internal.
	if err := defaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("prune the schema's defaults: %w", err)
	}
	sv, _, err := validation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("build the schema validator: %w", err)
	}
	var (
		status          *apiextensions.CustomResourceSubresourceStatus
		statusValidator validation.SchemaValidator
		scale           *apiextensions.CustomResourceSubresourceScale
	)
	if sub := v.Subresources; sub != nil && sub.Status != nil {
		status = &apiextensions.CustomResourceSubresourceStatus{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceStatus_To_apiextensions_CustomResourceSubresourceStatus(sub.Status, status, nil); err != nil {
			return nil, fmt.Errorf("convert the status subresource: %w", err)
		}
		if schema, ok := internal.OpenAPIV3Schema.Properties["status"]; ok {
			if statusValidator, _, err = validation.NewSchemaValidator(&schema); err != nil {
				return nil, fmt.Errorf("build the status schema validator: %w", err)
			}
		}
	}
	if sub := v.Subresources; sub != nil && sub.Scale != nil {
		scale = &apiextensions.CustomResourceSubresourceScale{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(sub.Scale, scale, nil); err != nil {
			return nil, fmt.Errorf("convert the scale subresource: %w", err)
		}
	}
	strategy := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(), namespaced, gvk,
		sv, statusValidator, s, status, scale, v.SelectableFields)
	return &version{structural: s, strategy: strategy}, nil
}

// Validate checks a whole object (as decoded from JSON or YAML into
// map[string]any) as the API server would on create, against the served
// version its apiVersion names. obj is not modified.
func (c *CRD) Validate(obj map[string]any) field.ErrorList {
	v, errs := c.version(obj)
	if len(errs) > 0 {
		return errs
	}
	u, err := normalize(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(nil, nil, err.Error())}
	}
	errs, decoded := decode(u, v.structural)
	if !decoded {
		// The API server refuses the request at decoding.
		return errs
	}
	defaulting.Default(u, v.structural)

	// What the registry does with a decoded object on create.
	ctx := context.Background()
	before := runtime.DeepCopyJSON(u)
	cr := &unstructured.Unstructured{Object: u}
	v.strategy.PrepareForCreate(ctx, cr)
	for _, p := range removed(before, cr.Object, nil) {
		errs = append(errs, field.Forbidden(p, "the API server drops it on create (the CRD has a status subresource)"))
	}
	return append(errs, v.strategy.Validate(ctx, cr)...)
}

// MissingDefaults lists the fields the API server's defaulting would add to
// the object: fields with a schema default that the object leaves out (or
// sets to null), inside objects it has or that a default creates. Each is
// drift between what was rendered and what a GitOps tool reads back. Fields
// a default brings with it are not listed, only the defaulted field itself.
func (c *CRD) MissingDefaults(obj map[string]any) ([]string, error) {
	v, errs := c.version(obj)
	if len(errs) > 0 {
		return nil, fmt.Errorf("missing defaults: %w", errs.ToAggregate())
	}
	u, err := normalize(obj)
	if err != nil {
		return nil, fmt.Errorf("missing defaults: %w", err)
	}
	// As the API server does: pruning first, so defaults inside unknown
	// fields are not counted; then defaulting.
	pruning.Prune(u, v.structural, true)
	defaulting.PruneNonNullableNullsWithoutDefaults(u, v.structural)
	before := runtime.DeepCopyJSON(u)
	defaulting.Default(u, v.structural)
	var out []string
	added(before, u, v.structural, nil, &out)
	return out, nil
}

// version returns the schema obj's apiVersion names, or why there is none.
func (c *CRD) version(obj map[string]any) (*version, field.ErrorList) {
	apiVersion, _ := obj["apiVersion"].(string)
	group, name, ok := strings.Cut(apiVersion, "/")
	if !ok || group != c.Group {
		return nil, field.ErrorList{field.Invalid(field.NewPath("apiVersion"), obj["apiVersion"], "not in group "+c.Group)}
	}
	if kind, _ := obj["kind"].(string); kind != c.Kind {
		return nil, field.ErrorList{field.NotSupported(field.NewPath("kind"), obj["kind"], []string{c.Kind})}
	}
	v, ok := c.versions[name]
	if !ok {
		return nil, field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), apiVersion, c.served())}
	}
	return v, nil
}

// served lists the apiVersions of the served versions.
func (c *CRD) served() []string {
	out := make([]string, 0, len(c.versions))
	for name := range c.versions {
		out = append(out, c.Group+"/"+name)
	}
	sort.Strings(out)
	return out
}

// normalize deep-copies obj into the form the API server decodes JSON into:
// whole numbers become int64, as the CEL and OpenAPI validators expect.
func normalize(obj map[string]any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode the object as JSON: %w", err)
	}
	var u map[string]any
	if err := utiljson.Unmarshal(data, &u); err != nil {
		return nil, fmt.Errorf("decode the object's JSON: %w", err)
	}
	return u, nil
}

// decode does to u what the API server's decoder does to a custom resource
// (unstructuredSchemaCoercer in apiextensions-apiserver), and reports every
// field it drops and every metadata it cannot decode. It returns false when
// the root metadata is not an ObjectMeta, which the API server refuses
// before any validation.
func decode(u map[string]any, s *structuralschema.Structural) (field.ErrorList, bool) {
	var errs field.ErrorList
	meta, found, unknown, err := objectmeta.GetObjectMetaWithOptions(u, objectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), u["metadata"], err.Error()))
	}
	errs = append(errs, unknownFields(unknown, "unknown field of ObjectMeta: the API server drops it")...)

	pruned := pruning.PruneWithOptions(u, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	errs = append(errs, unknownFields(pruned, "unknown field: the API server prunes it")...)

	beforeNulls := runtime.DeepCopyJSON(u)
	defaulting.PruneNonNullableNullsWithoutDefaults(u, s)
	for _, p := range removed(beforeNulls, u, nil) {
		errs = append(errs, field.Forbidden(p, "null where the schema is not nullable and has no default: the API server drops it"))
	}

	// Metadata of embedded resources (x-kubernetes-embedded-resource).
	coerceErr, unknown := objectmeta.CoerceWithOptions(nil, u, s, false, objectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if coerceErr != nil {
		errs = append(errs, coerceErr)
	}
	errs = append(errs, unknownFields(unknown, "unknown field of an embedded ObjectMeta: the API server drops it")...)

	if found && err == nil {
		// The API server stores metadata as it decoded it.
		if err := objectmeta.SetObjectMeta(u, meta); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("metadata"), u["metadata"], err.Error()))
		}
	}
	return errs, err == nil
}

// unknownFields turns the paths the API server reports for unknown fields
// (as in its "unknown field" warnings) into errors.
func unknownFields(paths []string, detail string) field.ErrorList {
	var errs field.ErrorList
	for _, p := range paths {
		errs = append(errs, field.Forbidden(parsePath(p), detail))
	}
	return errs
}

// parsePath reads a path in the API server's unknown-field notation,
// "spec.ports[0].port", into a field.Path that prints the same. Map keys
// appear there as ".key", like fields; a path it cannot read is kept whole.
func parsePath(s string) *field.Path {
	var p *field.Path
	for _, seg := range strings.Split(s, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		if name == "" {
			return field.NewPath(s)
		}
		p = child(p, name)
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil || (after != "" && after[0] != '[') {
				return field.NewPath(s)
			}
			p = p.Index(n)
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return p
}

func child(p *field.Path, name string) *field.Path {
	if p == nil {
		return field.NewPath(name)
	}
	return p.Child(name)
}

// removed lists the fields of before that after no longer has, in the
// notation of parsePath. Lists keep their length through pruning, so items
// are compared by index.
func removed(before, after any, path *field.Path) []*field.Path {
	var out []*field.Path
	switch b := before.(type) {
	case map[string]any:
		a, _ := after.(map[string]any)
		for _, k := range sortedKeys(b) {
			av, ok := a[k]
			if !ok {
				out = append(out, child(path, k))
				continue
			}
			out = append(out, removed(b[k], av, child(path, k))...)
		}
	case []any:
		a, _ := after.([]any)
		for i := range min(len(a), len(b)) {
			out = append(out, removed(b[i], a[i], path.Index(i))...)
		}
	}
	return out
}

// added appends to out the fields defaulting gave after that before lacked
// (or had as null). Below a defaulted field, it compares with the schema's
// default rather than with nothing, so that only defaults applied inside
// the default are listed, not the default's own content.
func added(before, after any, s *structuralschema.Structural, path *field.Path, out *[]string) {
	switch a := after.(type) {
	case map[string]any:
		b, _ := before.(map[string]any)
		for _, k := range sortedKeys(a) {
			ps := fieldSchema(s, k)
			bv, ok := b[k]
			if !ok || (bv == nil && a[k] != nil) {
				*out = append(*out, child(path, k).String())
				bv = defaultOf(ps)
			}
			added(bv, a[k], ps, child(path, k), out)
		}
	case []any:
		b, _ := before.([]any)
		var items *structuralschema.Structural
		if s != nil {
			items = s.Items
		}
		for i := range a {
			var bv any
			if i < len(b) {
				bv = b[i]
			}
			if bv == nil && a[i] != nil {
				*out = append(*out, path.Index(i).String())
				bv = defaultOf(items)
			}
			added(bv, a[i], items, path.Index(i), out)
		}
	}
}

// fieldSchema returns the schema of field k of an object with schema s, or
// nil.
func fieldSchema(s *structuralschema.Structural, k string) *structuralschema.Structural {
	if s == nil {
		return nil
	}
	if p, ok := s.Properties[k]; ok {
		return &p
	}
	if s.AdditionalProperties != nil {
		return s.AdditionalProperties.Structural
	}
	return nil
}

func defaultOf(s *structuralschema.Structural) any {
	if s == nil {
		return nil
	}
	return s.Default.Object
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
