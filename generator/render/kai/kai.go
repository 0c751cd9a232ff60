// Package kai renders a plan into NVIDIA KAI Scheduler objects: a tree of
// scheduling.run.ai/v2 Queues, PriorityClasses and labelled Namespaces. KAI
// has no lending limit and no per-flavor quota; what cannot be expressed
// exactly is returned as warnings naming the agreement field.
package kai

import (
	"fmt"
	"strings"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// Names and labels KAI reads.
const (
	QueueAPIVersion = "scheduling.run.ai/v2"
	// QueueLabel assigns a namespace's workloads to a queue.
	QueueLabel = "kai.scheduler/queue"
	// WholeGPU is the one resource KAI queues count as GPUs.
	WholeGPU = "nvidia.com/gpu"
	// maxUserPriority is the highest value Kubernetes accepts for a
	// PriorityClass that is not a system one.
	maxUserPriority = 1_000_000_000
)

// Suffixes of the two subtrees under the pool queue.
const (
	SharedSuffix   = "-shared"
	ReservedSuffix = "-reserved"
)

// Render returns KAI objects and the warnings about what KAI approximates,
// or an error list when the agreement cannot be rendered for KAI at all.
func Render(p *plan.Agreement, file string) ([]render.Object, diag.List, diag.List) {
	r := &renderer{p: p, file: file}
	return r.render(), r.warnings, r.errors
}

type renderer struct {
	p        *plan.Agreement
	file     string
	warnings diag.List
	errors   diag.List
}

func (r *renderer) warnf(field, format string, args ...any) {
	r.warnings = append(r.warnings, diag.Diagnostic{Severity: diag.Warning, File: r.file, Field: field, Message: "kai: " + fmt.Sprintf(format, args...)})
}

func (r *renderer) errorf(field, format string, args ...any) {
	r.errors = append(r.errors, diag.Diagnostic{Severity: diag.Error, File: r.file, Field: field, Message: "kai: " + fmt.Sprintf(format, args...)})
}

// counted reports whether KAI can count a flavor's GPUs.
func counted(f plan.Flavor) bool { return f.Resource == WholeGPU }

// reserved reports whether a team's GPUs are never lent: such teams go in a
// subtree whose limit equals its quota, and the other subtree's limit keeps
// their GPUs out of everyone else's reach.
func reserved(p *plan.Agreement, t plan.Team) bool {
	var guaranteed, lendable int64
	for _, f := range p.Flavors {
		if counted(f) {
			q := t.Quota(f.Name)
			guaranteed += q.Guaranteed
			lendable += q.Lendable
		}
	}
	return guaranteed > 0 && lendable == 0
}

func (r *renderer) render() []render.Object {
	p := r.p
	var capacity int64
	var countedNames []string
	for _, f := range p.Flavors {
		if !counted(f) {
			r.warnf("flavors."+f.Name+".resource", "KAI queues count whole GPUs (%s) only: the quotas of flavor %s (%s) are not expressed", WholeGPU, f.Name, f.Resource)
			continue
		}
		capacity += f.Capacity
		countedNames = append(countedNames, f.Name)
	}
	if len(countedNames) > 1 {
		r.warnf("flavors", "KAI quotas are not per flavor: flavors %s are summed into one GPU quota per team", strings.Join(countedNames, ", "))
	}

	type leaf struct {
		team                      plan.Team
		guaranteed, borrow, share int64
	}
	var shared, reservedTeams []leaf
	var sharedQuota, reservedQuota int64
	for _, t := range p.Teams {
		var g, l, b int64
		for _, f := range p.Flavors {
			if counted(f) {
				q := t.Quota(f.Name)
				g, l, b = g+q.Guaranteed, l+q.Lendable, b+q.Borrow
			}
		}
		lf := leaf{team: t, guaranteed: g, borrow: b}
		if reserved(p, t) {
			reservedTeams = append(reservedTeams, lf)
			reservedQuota += g
			if b > 0 {
				r.warnf("teams."+t.Name+".borrow", "a team that never lends sits in the %s%s subtree, whose limit equals its quota: it cannot borrow the %d GPUs the agreement allows", p.Name, ReservedSuffix, b)
			}
		} else {
			shared = append(shared, lf)
			sharedQuota += g
			if l > 0 && l < g {
				r.warnf("teams."+t.Name+".lendable", "KAI has no lending limit: all %d idle guaranteed GPUs may be lent, not only %d; they are reclaimed when the team needs them", g, l)
			}
		}
		if t.Reclaim == plan.ReclaimWait {
			r.warnf("teams."+t.Name+".reclaim", `KAI always reclaims lent GPUs by preempting borrowers; "wait" is not expressed`)
		}
	}

	var objs []render.Object
	for _, t := range p.Teams {
		for _, ns := range t.Namespaces {
			objs = append(objs, render.Namespace(p.Name, t.Name, ns, map[string]string{QueueLabel: t.Name}))
			if t.VMs != nil {
				objs = append(objs, render.VMQuota(p.Name, t.Name, ns, *t.VMs))
			}
		}
	}
	for _, pr := range p.Priorities {
		// Kubernetes reserves the system- prefix for its own PriorityClasses
		// and refuses any other by that name (Kueue's WorkloadPriorityClass
		// does not): refuse it here rather than fail the sync halfway.
		if strings.HasPrefix(pr.Name, "system-") {
			r.errorf("priorities."+pr.Name, "names starting with system- are reserved for Kubernetes' own PriorityClasses")
			continue
		}
		if pr.Value > maxUserPriority {
			r.errorf("priorities."+pr.Name, "%d is above %d, the highest priority Kubernetes accepts for a PriorityClass", pr.Value, maxUserPriority)
			continue
		}
		objs = append(objs, priorityClass(p, pr))
	}

	names := map[string]string{p.Name: "the pool queue"}
	claim := func(name, what string) {
		if prev, ok := names[name]; ok {
			r.errorf("teams."+name, "queue name %q is used both by %s and by %s", name, prev, what)
		}
		names[name] = what
	}

	objs = append(objs, r.queue(p.Name, "", "", gpu(sharedQuota+reservedQuota, capacity, 1)))
	if len(shared) > 0 {
		claim(p.Name+SharedSuffix, "the shared subtree")
		// The shared subtree may grow into everything but the reserved
		// teams' guarantees: that is what keeps them never lent.
		objs = append(objs, r.queue(p.Name+SharedSuffix, p.Name, "", gpu(sharedQuota, capacity-reservedQuota, 1)))
		for _, l := range shared {
			claim(l.team.Name, "team "+l.team.Name)
			objs = append(objs, r.queue(l.team.Name, p.Name+SharedSuffix, l.team.Name, gpu(l.guaranteed, l.guaranteed+l.borrow, l.team.Weight)))
		}
	}
	if len(reservedTeams) > 0 {
		claim(p.Name+ReservedSuffix, "the reserved subtree")
		objs = append(objs, r.queue(p.Name+ReservedSuffix, p.Name, "", gpu(reservedQuota, reservedQuota, 0)))
		for _, l := range reservedTeams {
			claim(l.team.Name, "team "+l.team.Name)
			objs = append(objs, r.queue(l.team.Name, p.Name+ReservedSuffix, l.team.Name, gpu(l.guaranteed, l.guaranteed, l.team.Weight)))
		}
	}
	return objs
}

// gpu returns a Queue's resources: GPUs as agreed; cpu and memory unlimited
// (-1), since the agreement is about GPUs.
func gpu(quota, limit, weight int64) map[string]any {
	unlimited := map[string]any{"quota": int64(-1), "limit": int64(-1), "overQuotaWeight": int64(1)}
	return map[string]any{
		"gpu":    map[string]any{"quota": quota, "limit": limit, "overQuotaWeight": weight},
		"cpu":    unlimited,
		"memory": unlimited,
	}
}

func (r *renderer) queue(name, parent, team string, resources map[string]any) render.Object {
	spec := map[string]any{"resources": resources}
	if parent != "" {
		spec["parentQueue"] = parent
	}
	return render.Object{
		APIVersion: QueueAPIVersion, Kind: "Queue", Name: name,
		Body: map[string]any{
			"apiVersion": QueueAPIVersion,
			"kind":       "Queue",
			"metadata":   map[string]any{"name": name, "labels": render.Labels(r.p.Name, team)},
			"spec":       spec,
		},
	}
}

func priorityClass(p *plan.Agreement, pr plan.Priority) render.Object {
	return render.Object{
		APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Name: pr.Name,
		Body: map[string]any{
			"apiVersion":  "scheduling.k8s.io/v1",
			"kind":        "PriorityClass",
			"metadata":    map[string]any{"name": pr.Name, "labels": render.Labels(p.Name, "")},
			"value":       int64(pr.Value),
			"description": fmt.Sprintf("Priority %s of the GPU pool %s, from its tenancy agreement", pr.Name, p.Name),
			// The API server's default, written out.
			"preemptionPolicy": "PreemptLowerPriority",
		},
	}
}
