package diff

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Small builders, so the cases read like the agreements they stand for:
// agreement("gpu-pool", h100(32), team("training", 16, 8, 8)).

type teamSpec struct {
	name   string
	quotas []plan.Quota
	weight int64
}

func team(name string, quotas ...plan.Quota) teamSpec {
	return teamSpec{name: name, quotas: quotas, weight: 1}
}

func quota(flavor string, guaranteed, lendable, borrow int64) plan.Quota {
	return plan.Quota{Flavor: flavor, Guaranteed: guaranteed, Lendable: lendable, Borrow: borrow}
}

func flavor(name string, capacity int64) plan.Flavor {
	return plan.Flavor{Name: name, Resource: "nvidia.com/gpu", Capacity: capacity}
}

// agreement builds a plan and a Kueue-shaped rendering of it: a Cohort, a
// ResourceFlavor per flavor and a ClusterQueue per team. It stands in for
// the renderer in unit tests; the CLI's golden tests use the real one.
func agreement(name string, flavors []plan.Flavor, teams ...teamSpec) *generator.Result {
	p := &plan.Agreement{Name: name, Flavors: flavors}
	res := &generator.Result{Plan: p}
	res.Objects = append(res.Objects, object("Cohort", "", name, map[string]any{}))
	for _, f := range flavors {
		res.Objects = append(res.Objects, object("ResourceFlavor", "", f.Name, map[string]any{
			"nodeLabels": map[string]any{"nvidia.com/gpu.product": f.Name},
		}))
	}
	for _, t := range teams {
		pt := plan.Team{Name: t.name, Namespaces: []string{t.name}, Reclaim: plan.ReclaimPreempt, Weight: t.weight}
		var fl []any
		for _, f := range flavors {
			q := quota(f.Name, 0, 0, 0)
			for _, tq := range t.quotas {
				if tq.Flavor == f.Name {
					q = tq
				}
			}
			pt.Quotas = append(pt.Quotas, q)
			fl = append(fl, map[string]any{
				"name": f.Name,
				"resources": []any{map[string]any{
					"name":           f.Resource,
					"nominalQuota":   q.Guaranteed,
					"lendingLimit":   q.Lendable,
					"borrowingLimit": q.Borrow,
				}},
			})
		}
		p.Teams = append(p.Teams, pt)
		res.Objects = append(res.Objects, object("ClusterQueue", "", t.name, map[string]any{
			"cohortName":       name,
			"fairSharing":      map[string]any{"weight": t.weight},
			"resourceGroups":   []any{map[string]any{"coveredResources": []any{"nvidia.com/gpu"}, "flavors": fl}},
			"preemption":       map[string]any{"reclaimWithinCohort": "Any"},
			"queueingStrategy": "BestEffortFIFO",
		}))
	}
	return res
}

func object(kind, namespace, name string, spec map[string]any) generator.Object {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	fields := map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": meta, "spec": spec}
	y, err := yaml.Marshal(fields)
	if err != nil {
		panic(err)
	}
	return generator.Object{Fields: fields, YAML: y}
}

func withWarning(r *generator.Result, field, msg string) *generator.Result {
	r.Warnings = append(r.Warnings, generator.Diagnostic{Severity: "warning", File: "tenancy.toml", Pos: diag.Pos{Line: 30, Column: 1}, Path: fieldPath(field), Message: msg})
	return r
}

// fieldPath is the path a diagnostic names, written as it prints.
func fieldPath(s string) *field.Path {
	if s == "" {
		return nil
	}
	return field.NewPath(s)
}
