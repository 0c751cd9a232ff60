package agreement

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/load"
)

// priorityKeys are the keys of a priority written as a table,
// NAME = { value = 1000, preemptible = false }.
var priorityKeys = []string{"value", "preemptible"}

// DefaultPreemptible is what a priority says about preemption when it does
// not say: its work may borrow idle GPUs, and may be preempted to give them
// back or for higher-priority work of its team. It keeps borrowing possible
// at every priority of an agreement written before the key existed.
const DefaultPreemptible = true

// priority decodes one [priorities] entry: an integer (NAME = 1000), or a
// table with the value and whether the priority's work is preemptible.
func (d *decoder) priority(name string, v *load.Value, path *field.Path) *Priority {
	p := &Priority{Name: name, Pos: v.KeyPos, Path: path, Preemptible: Bool{Path: path.Child("preemptible")}}
	if v.Kind != load.Table {
		p.Value = d.int(v, path)
		return p
	}
	d.unknown(v.Table, path, priorityKeys)
	p.Value = d.int(v.Table.Get("value"), path.Child("value"))
	if p.Value.State == Unset {
		d.r.Errorf(field.ErrorTypeRequired, v.KeyPos, p.Value.Path,
			"a priority written as a table needs its value, in the table beside preemptible")
		d.r.Suggest("value = 1000")
	}
	p.Preemptible = d.bool(v.Table.Get("preemptible"), path.Child("preemptible"))
	return p
}

// defaultPriorities fills each priority's preemptible when the file leaves
// it out.
func defaultPriorities(a *Agreement) {
	for _, p := range a.Priorities {
		if p.Preemptible.State == Unset {
			p.Preemptible = Bool{Value: DefaultPreemptible, State: Defaulted, Pos: p.Pos, Path: p.Preemptible.Path}
		}
	}
}
