package generator

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
	"github.com/tenancy-dev/tenancy/generator/render/kueue"
	"github.com/tenancy-dev/tenancy/generator/render/windowctl"
	"github.com/tenancy-dev/tenancy/generator/schedule"
)

// WindowFieldManager is the field manager the windows controller applies
// under; Argo CD's ignoreDifferences names it (managedFieldsManagers).
const WindowFieldManager = windowctl.FieldManager

// WindowApply is what the windows controller applies to one queue at an
// instant: a server-side apply patch holding only the fields it owns.
type WindowApply struct {
	Team string
	// Queue is the queue's name: the team's, or on KAI with node pools
	// one of its pool Queues (training-h100).
	Queue string
	Patch map[string]any // apiVersion, kind, metadata.name and the owned fields
}

// WindowState is the agreement at an instant (schedule.State) and the
// patches that make the cluster's queues match it.
type WindowState struct {
	schedule.State
	Applies []WindowApply
}

// Windows computes, from a checked plan and an instant alone, the queues'
// owned fields for the teams that have windows: the backend renders the
// plan with the quotas in effect at t, and the owned fields are taken from
// its objects, so they are exactly what render writes outside every window.
// Kueue: the ClusterQueue's spec.resourceGroups (an atomic list, so the
// whole list; its lending and borrowing limits are what change). KAI: the
// team Queue's spec.resources.gpu.limit (guaranteed + borrow); with node
// pools, each of the team's pool Queues (windowctl.Queues), one apply each.
func Windows(p *plan.Agreement, at time.Time, opts Options) (*WindowState, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	opts = opts.Resolve(p)
	s, err := schedule.At(p, at)
	if err != nil {
		return nil, err
	}
	var fam render.Family = kueue.Renderer{APIVersion: opts.KueueAPI}
	if opts.Backend == KAI {
		fam = kai.Renderer{}
	}
	objs, diags := fam.Render(schedule.Apply(p, s))
	if errs := diags.Errors(); len(errs) > 0 {
		return nil, &AgreementError{Diagnostics: errs}
	}
	d := gpu.Describe(opts.Backend)
	out := &WindowState{State: s}
	for _, q := range windowctl.Queues(p, opts.Backend) {
		var found *render.Object
		for i := range objs {
			if objs[i].Name() == q.Name && objs[i].Kind() == d.QueueKind {
				found = &objs[i]
			}
		}
		if found == nil {
			return nil, fmt.Errorf("windows: the %s backend renders no queue %s for team %s", opts.Backend, q.Name, q.Team)
		}
		patch := map[string]any{
			"apiVersion": found.APIVersion(),
			"kind":       found.Kind(),
			"metadata":   map[string]any{"name": q.Name},
		}
		for _, path := range d.WindowOwned {
			v, ok, err := unstructured.NestedFieldNoCopy(found.Fields, path...)
			if err != nil || !ok {
				return nil, fmt.Errorf("windows: the %s %s of team %s has no %s", d.QueueKind, q.Name, q.Team, strings.Join(path, "."))
			}
			setPath(patch, path, v)
		}
		out.Applies = append(out.Applies, WindowApply{Team: q.Team, Queue: q.Name, Patch: patch})
	}
	return out, nil
}

// setPath sets m's field at path to v, making the maps on the way.
func setPath(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}
