package agreement

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/load"
)

// componentKeys are the keys of the [components] table.
var componentKeys = []string{"kueue_namespace", "kai_namespace", "kai_reservation_namespace", "argocd_namespace"}

// Namespaces of the components an agreement relies on, as their upstream
// manifests install them: Kueue's config/default, KAI Scheduler's Helm chart
// (v0.17.0: the scheduler's release namespace, and
// global.resourceReservation.namespace for the pods that reserve GPUs), and
// Argo CD's install.yaml.
const (
	DefaultKueueNamespace          = "kueue-system"
	DefaultKAINamespace            = "kai-scheduler"
	DefaultKAIReservationNamespace = "kai-resource-reservation"
	DefaultArgoCDNamespace         = "argocd"
)

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

// components decodes the [components] table; absent, it is all defaults.
func (d *decoder) components(v *load.Value) *Components {
	path := field.NewPath("components")
	c := &Components{Pos: Pos{Line: 1, Column: 1}, Path: path}
	t := &load.Fields{}
	if tv := d.table(v, path); tv != nil {
		c.Pos, t = tv.KeyPos, tv.Table
		d.unknown(t, path, componentKeys)
	}
	c.KueueNamespace = d.str(t.Get("kueue_namespace"), path.Child("kueue_namespace"))
	c.KAINamespace = d.str(t.Get("kai_namespace"), path.Child("kai_namespace"))
	c.KAIReservationNamespace = d.str(t.Get("kai_reservation_namespace"), path.Child("kai_reservation_namespace"))
	c.ArgoCDNamespace = d.str(t.Get("argocd_namespace"), path.Child("argocd_namespace"))
	return c
}

// defaultComponents fills the absent keys with the upstream namespaces.
func defaultComponents(c *Components) {
	str := func(s *Str, value string) {
		if s.State == Unset {
			*s = Str{Value: value, State: Defaulted, Pos: c.Pos, Path: s.Path}
		}
	}
	str(&c.KueueNamespace, DefaultKueueNamespace)
	str(&c.KAINamespace, DefaultKAINamespace)
	str(&c.KAIReservationNamespace, DefaultKAIReservationNamespace)
	str(&c.ArgoCDNamespace, DefaultArgoCDNamespace)
}
