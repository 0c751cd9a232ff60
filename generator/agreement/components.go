package agreement

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/load"
)

// componentKeys are the keys of the [components] table, in keys()' order,
// so the table's keys are written once.
var componentKeys = func() []string {
	var out []string
	for _, k := range (&Components{}).keys() {
		out = append(out, k.key)
	}
	return out
}()

// Components is the [components] table: the namespaces where this cluster
// runs the components the agreement relies on, so that none of them is
// handed to a team. Absent keys hold the upstream defaults (state
// Defaulted); a cluster that installed a component elsewhere names its
// namespace here.
type Components struct {
	Pos  Pos // the table's header; the file's start when absent
	Path *field.Path
	// KueueNamespace runs Kueue's controller manager.
	KueueNamespace Str
	// KAINamespace runs KAI Scheduler's scheduler, binder and pod grouper.
	KAINamespace Str
	// KAIReservationNamespace holds the pods KAI's binder creates to
	// reserve GPUs for fractional workloads.
	KAIReservationNamespace Str
	// ArgoCDNamespace runs Argo CD, which syncs the render.
	ArgoCDNamespace Str
}

// Namespaces returns the components' namespaces, each with the value that
// names it, in the table's key order.
func (c *Components) Namespaces() []Str {
	return []Str{c.KueueNamespace, c.KAINamespace, c.KAIReservationNamespace, c.ArgoCDNamespace}
}

// component is one key of [components]: the field it fills and its default.
type component struct {
	key, upstream string
	ns            *Str
}

// keys pairs each key of componentKeys with its field and its default, the
// namespace the component's upstream manifests install it in: Kueue's
// config/default, KAI Scheduler's Helm chart (v0.17.0: the release
// namespace, and global.resourceReservation.namespace for the pods that
// reserve GPUs), and Argo CD's install.yaml.
func (c *Components) keys() []component {
	return []component{
		{"kueue_namespace", "kueue-system", &c.KueueNamespace},
		{"kai_namespace", "kai-scheduler", &c.KAINamespace},
		{"kai_reservation_namespace", "kai-resource-reservation", &c.KAIReservationNamespace},
		{"argocd_namespace", "argocd", &c.ArgoCDNamespace},
	}
}

// components decodes the [components] table; absent, it is all defaults
// (at the file's start, where a problem with a default is reported).
func (d *decoder) components(v *load.Value) *Components {
	c := &Components{Path: field.NewPath("components")}
	var t *load.Fields
	c.Pos, t = d.optionalTable(v, c.Path)
	d.unknown(t, c.Path, componentKeys) // none when absent
	for _, k := range c.keys() {
		*k.ns = d.str(t.Get(k.key), c.Path.Child(k.key))
	}
	return c
}

// defaultComponents fills the absent keys with the upstream namespaces.
func defaultComponents(c *Components) {
	for _, k := range c.keys() {
		if k.ns.State == Unset {
			*k.ns = Str{Value: k.upstream, State: Defaulted, Pos: c.Pos, Path: k.ns.Path}
		}
	}
}

// optionalTable decodes a top-level table whose keys are all optional: its
// header's position and its fields; absent (or not a table, reported), the
// file's start, where a problem with a default is reported, and no fields.
func (d *decoder) optionalTable(v *load.Value, path *field.Path) (Pos, *load.Fields) {
	if tv := d.table(v, path); tv != nil {
		return tv.KeyPos, tv.Table
	}
	return Pos{Line: 1, Column: 1}, &load.Fields{}
}
