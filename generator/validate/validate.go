// Package validate checks the semantic rules of a decoded agreement: counts
// that add up, names Kubernetes accepts, references that resolve. It reports
// every problem at once, each with its position and field path, and never
// builds a Kubernetes object.
package validate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// Version is the file format version this package understands.
const Version = 1

// maxCount bounds GPU counts and weights: KAI's Queue quotas are JSON
// numbers read as float64, exact only up to 2^53, and the bound keeps sums of
// counts (guaranteed + borrow, capacities across flavors) from overflowing
// int64 into negative quotas.
const maxCount = 1 << 53

// Validate returns every error and warning of the agreement, sorted by
// position: the format's own rules, the same for every backend. What a
// backend refuses or approximates is its family's Check, on the plan.
func Validate(a *agreement.Agreement) diag.List {
	v := &validator{a: a, r: &diag.Reporter{File: a.File}}
	v.version()
	v.name()
	v.flavors()
	v.priorities()
	v.teams()
	v.departments()
	v.windows()
	v.topology()
	v.guardrails()
	v.monitoring()
	v.components()
	v.kai()
	v.clusters()
	v.owners()
	v.r.List.Sort()
	return v.r.List
}

type validator struct {
	a *agreement.Agreement
	r *diag.Reporter
}

// top is where a problem with a missing top-level key is reported.
var top = agreement.Pos{Line: 1, Column: 1}

func (v *validator) errorf(typ field.ErrorType, pos agreement.Pos, path *field.Path, format string, args ...any) {
	v.r.Errorf(typ, pos, path, format, args...)
}

func (v *validator) warnf(typ field.ErrorType, pos agreement.Pos, path *field.Path, format string, args ...any) {
	v.r.Warnf(typ, pos, path, format, args...)
}

// suggest attaches TOML that fixes it to the problem reported last.
func (v *validator) suggest(format string, args ...any) {
	v.r.Suggest(fmt.Sprintf(format, args...))
}

func (v *validator) version() {
	ver := v.a.Version
	switch {
	case ver.State == agreement.Unset:
		v.errorf(field.ErrorTypeRequired, top, ver.Path, "is required: add it at the top of the file")
		v.suggest("version = %d", Version)
	case ver.IsSet() && ver.Value != Version:
		v.errorf(field.ErrorTypeNotSupported, ver.Pos, ver.Path, "unsupported version %d: this tenancy reads version %d", ver.Value, Version)
	}
}

func (v *validator) name() {
	n := v.a.Name
	switch n.State {
	case agreement.Unset:
		v.errorf(field.ErrorTypeRequired, top, n.Path, "is required: name the shared GPU pool (the Kueue Cohort and KAI parent queue) at the top of the file")
		v.suggest(`name = "gpu-pool"`)
		return
	case agreement.Invalid:
		return
	}
	v.dnsLabel(n.Pos, n.Path, n.Value)
}

// dnsLabel reports a name that is not an RFC 1123 label, the rule for
// namespaces and the strictest of the names tenancy renders.
func (v *validator) dnsLabel(pos agreement.Pos, path *field.Path, name string) bool {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		v.errorf(field.ErrorTypeInvalid, pos, path, "%q is not a valid name: %s", name, strings.Join(errs, "; "))
		return false
	}
	return true
}

// labels checks Kubernetes label keys and values; what names them in the
// messages ("node label", "label").
func (v *validator) labels(ls []agreement.Label, what string) {
	for _, l := range ls {
		for _, msg := range validation.IsQualifiedName(l.Key) {
			v.errorf(field.ErrorTypeInvalid, l.Value.Pos, l.Value.Path, "%s key %q is invalid: %s", what, l.Key, msg)
		}
		if l.Value.IsSet() {
			for _, msg := range validation.IsValidLabelValue(l.Value.Value) {
				v.errorf(field.ErrorTypeInvalid, l.Value.Pos, l.Value.Path, "%s value %q is invalid: %s", what, l.Value.Value, msg)
			}
		}
	}
}

func (v *validator) flavors() {
	if len(v.a.Flavors) == 0 {
		v.errorf(field.ErrorTypeRequired, top, field.NewPath("flavors"), "at least one flavor is required: its GPUs and how many the cluster has")
		v.suggest("[flavors.h100]\ncapacity = 32")
		return
	}
	for _, f := range v.a.Flavors {
		v.dnsLabel(f.Pos, f.Path, f.Name)
		res := f.Resource.Value
		if f.Resource.IsSet() {
			v.resourceName(f.Resource)
		}
		switch {
		case f.Capacity.State == agreement.Unset:
			v.errorf(field.ErrorTypeRequired, f.Pos, f.Capacity.Path, "is required: how many %s the cluster has", res)
		case f.Capacity.IsSet() && f.Capacity.Value <= 0:
			v.errorf(field.ErrorTypeInvalid, f.Capacity.Pos, f.Capacity.Path, "must be positive, got %d", f.Capacity.Value)
		}
		v.count(f.Capacity)
		if f.GPUsPerNode.IsSet() && f.GPUsPerNode.Value <= 0 {
			v.errorf(field.ErrorTypeInvalid, f.GPUsPerNode.Pos, f.GPUsPerNode.Path, "must be positive, got %d", f.GPUsPerNode.Value)
		}
		v.count(f.GPUsPerNode)
		// Kueue rejects a ResourceFlavor with a topologyName and no node
		// labels ("at least one nodeLabel is required when topology is
		// set"): topology-aware scheduling finds the flavor's nodes by them.
		if v.a.Topology != nil && len(f.NodeLabels) == 0 {
			v.errorf(field.ErrorTypeRequired, f.Pos, f.Path.Child("node_labels"), "at least one node label is required when [topology] is set: Kueue finds the flavor's nodes by them")
			v.suggest(`node_labels = { "nvidia.com/gpu.product" = "NVIDIA-H100-80GB-HBM3" }`)
		}
		v.labels(f.NodeLabels, "node label")
		for _, t := range f.Tolerations {
			v.toleration(t)
		}
	}
}

// weight checks a team's or a department's (who) weight: not negative, and
// 0 explained. A weight of 0 is a policy a pool may want (work that only
// ever runs on GPUs nobody else asks for), so it is a warning that says
// what each backend makes of it, not an error (docs/decisions.md, issue 28
// item 1).
func (v *validator) weight(w agreement.Int, who string) {
	switch {
	case !w.IsSet():
	case w.Value < 0:
		v.errorf(field.ErrorTypeInvalid, w.Pos, w.Path, "must not be negative, got %d", w.Value)
	case w.Value == 0:
		v.warnf(field.ErrorTypeInvalid, w.Pos, w.Path, "weight 0 gives the %s no share of the idle GPUs others ask for: KAI (overQuotaWeight 0) gives it none of the surplus and reclaims what it borrows first, and Kueue with fair sharing on ranks it last and preempts it first (with fair sharing off, tenancy's default, Kueue ignores weight); give it a borrow of 0 if it must never borrow, or a weight of 1 for an equal share", who)
	}
	v.count(w)
}

// count reports a count above maxCount; sign rules are the caller's.
func (v *validator) count(n agreement.Int) {
	if n.IsSet() && n.Value > maxCount {
		v.errorf(field.ErrorTypeTooLong, n.Pos, n.Path, "%d is too large: counts are limited to %d (2^53, the largest integer KAI's quotas hold exactly)", n.Value, int64(maxCount))
	}
}

// addCapped adds non-negative counts without overflowing: a sum too large
// for int64 stays at math.MaxInt64, which still exceeds any capacity.
func addCapped(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func (v *validator) resourceName(r agreement.Str) {
	name := r.Value
	switch {
	case name == "cpu" || name == "memory" || name == "ephemeral-storage" || strings.HasPrefix(name, "hugepages-"):
		v.errorf(field.ErrorTypeForbidden, r.Pos, r.Path, "%q is not a GPU resource: tenancy covers cpu and memory itself", name)
		return
	case !strings.Contains(name, "/"):
		v.errorf(field.ErrorTypeInvalid, r.Pos, r.Path, "%q must be an extended resource with a domain, e.g. nvidia.com/gpu or nvidia.com/mig-1g.10gb", name)
		return
	}
	for _, msg := range validation.IsQualifiedName(name) {
		v.errorf(field.ErrorTypeInvalid, r.Pos, r.Path, "%q is not a valid resource name: %s", name, msg)
	}
}

func (v *validator) toleration(t *agreement.Toleration) {
	op := t.Operator.Value
	switch op {
	case "", "Equal", "Exists":
	default:
		v.errorf(field.ErrorTypeNotSupported, t.Operator.Pos, t.Operator.Path, "must be Equal or Exists, got %q", op)
	}
	if op == "Exists" && t.Value.Value != "" {
		v.errorf(field.ErrorTypeForbidden, t.Value.Pos, t.Value.Path, "must be empty when operator is Exists")
	}
	if t.Key.Value == "" && op != "Exists" {
		v.errorf(field.ErrorTypeRequired, t.Pos, t.Key.Path, "is required unless operator is Exists")
	}
	if t.Key.Value != "" {
		for _, msg := range validation.IsQualifiedName(t.Key.Value) {
			v.errorf(field.ErrorTypeInvalid, t.Key.Pos, t.Key.Path, "%q is not a valid taint key: %s", t.Key.Value, msg)
		}
	}
	if t.Value.Value != "" {
		for _, msg := range validation.IsValidLabelValue(t.Value.Value) {
			v.errorf(field.ErrorTypeInvalid, t.Value.Pos, t.Value.Path, "%q is not a valid taint value: %s", t.Value.Value, msg)
		}
	}
	switch t.Effect.Value {
	case "", "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		v.errorf(field.ErrorTypeNotSupported, t.Effect.Pos, t.Effect.Path, "must be NoSchedule, PreferNoSchedule or NoExecute, got %q", t.Effect.Value)
	}
}

func (v *validator) priorities() {
	for _, p := range v.a.Priorities {
		if errs := validation.IsDNS1123Subdomain(p.Name); len(errs) > 0 {
			// At the value, as ever; at the key when a table omits it.
			pos, path := p.Value.Pos, p.Value.Path
			if p.Value.State == agreement.Unset {
				pos, path = p.Pos, p.Path
			}
			v.errorf(field.ErrorTypeInvalid, pos, path, "%q is not a valid priority class name: %s", p.Name, strings.Join(errs, "; "))
		}
		if p.Value.IsSet() && (p.Value.Value < math.MinInt32 || p.Value.Value > math.MaxInt32) {
			v.errorf(field.ErrorTypeInvalid, p.Value.Pos, p.Value.Path, "%d is outside the 32-bit range Kubernetes priorities use (%d to %d)", p.Value.Value, math.MinInt32, math.MaxInt32)
		}
	}
}

// flavorNames lists the agreement's flavors for messages.
func (v *validator) flavorNames() string {
	names := make([]string, len(v.a.Flavors))
	for i, f := range v.a.Flavors {
		names[i] = f.Name
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (v *validator) teams() {
	if len(v.a.Teams) == 0 {
		v.errorf(field.ErrorTypeRequired, top, field.NewPath("teams"), "the agreement has no teams: add at least one, with its guaranteed GPUs")
		v.suggest("[%s]\nguaranteed = 8", v.quotaTable("teams.training", v.teamFlavor(nil)))
		return
	}
	owner := map[string]string{} // namespace → team that claimed it first
	reserved := v.reservedNamespaces()
	for _, t := range v.a.Teams {
		validName := v.dnsLabel(t.Pos, t.Path, t.Name)
		for _, ns := range t.Namespaces {
			if ns.State == agreement.Defaulted && !validName {
				// The default namespace is the team's name, just reported:
				// saying it again for the namespace would repeat the error.
				continue
			}
			if !v.dnsLabel(ns.Pos, ns.Path, ns.Value) {
				continue
			}
			if why, ok := reserved[ns.Value]; ok {
				v.errorf(field.ErrorTypeForbidden, ns.Pos, ns.Path, "namespace %q %s", ns.Value, why)
				continue
			}
			if prev, ok := owner[ns.Value]; ok {
				if prev == t.Name {
					v.errorf(field.ErrorTypeDuplicate, ns.Pos, ns.Path, "namespace %q is listed twice", ns.Value)
				} else {
					v.errorf(field.ErrorTypeDuplicate, ns.Pos, ns.Path, "namespace %q already belongs to team %q: a namespace can belong to one team only", ns.Value, prev)
				}
				continue
			}
			owner[ns.Value] = t.Name
		}
		if t.Reclaim.IsSet() {
			switch t.Reclaim.Value {
			case "preempt", "wait":
			default:
				v.errorf(field.ErrorTypeNotSupported, t.Reclaim.Pos, t.Reclaim.Path, `must be "preempt" or "wait", got %q`, t.Reclaim.Value)
			}
		}
		v.weight(t.Weight, "team")
		if t.VMs.IsSet() && t.VMs.Value < 0 {
			v.errorf(field.ErrorTypeInvalid, t.VMs.Pos, t.VMs.Path, "must not be negative, got %d", t.VMs.Value)
		}
		v.teamQuotas(t)
	}
	v.capacity()
	v.borrowing()
}

func (v *validator) teamQuotas(t *agreement.Team) {
	v.quotaTables("team", "teams."+diag.TOMLKey(t.Name), v.teamFlavor(t), t.Shorthand, t.Flavors)
}

// quotaTable is where the quota keys of flavor go in a suggestion for the
// table named owner (a team's or a department's, as TOML names it): the
// table itself with one flavor, the flavor's table under it with several.
func (v *validator) quotaTable(owner, flavor string) string {
	if len(v.a.Flavors) > 1 {
		return owner + ".flavors." + diag.TOMLKey(flavor)
	}
	return owner
}

// teamFlavor is the flavor a suggestion about team t names: the first, in
// sorted order, of those t is guaranteed, else the first of the agreement,
// so the suggestion names a flavor the team holds and does not depend on
// the file's order. "" without flavors.
func (v *validator) teamFlavor(t *agreement.Team) string {
	first, held := "", ""
	for _, f := range v.a.Flavors {
		if first == "" || f.Name < first {
			first = f.Name
		}
		if t == nil {
			continue
		}
		if q := t.ByFlavor[f.Name]; q != nil && q.Guaranteed.Value > 0 && (held == "" || f.Name < held) {
			held = f.Name
		}
	}
	if held != "" {
		return held
	}
	return first
}

// quotaKeys writes the quota keys q has set as TOML key/value pairs, sep
// between them, in the order guaranteed, lendable, borrow.
func quotaKeys(q *agreement.Quota, sep string) string {
	var kv []string
	for _, k := range []struct {
		name string
		n    agreement.Int
	}{{"guaranteed", q.Guaranteed}, {"lendable", q.Lendable}, {"borrow", q.Borrow}} {
		if k.n.IsSet() {
			kv = append(kv, fmt.Sprintf("%s = %d", k.name, k.n.Value))
		}
	}
	return strings.Join(kv, sep)
}

// quotaTables checks the quota keys of a team or a department (owner), whose
// table TOML names table: the one-flavor shorthand (whose suggestion names
// flavor), the flavors its tables name, and each count.
func (v *validator) quotaTables(owner, table, flavor string, shorthand *agreement.Quota, flavors []*agreement.Quota) {
	if shorthand != nil {
		switch {
		case len(v.a.Flavors) > 1:
			first := firstSet(shorthand)
			v.errorf(field.ErrorTypeForbidden, first.Pos, first.Path, "the agreement has several flavors (%s): give guaranteed, lendable and borrow per flavor, in a table of its own under the %s's", v.flavorNames(), owner)
			if keys := quotaKeys(shorthand, "\n"); keys != "" {
				v.suggest("[%s]\n%s", v.quotaTable(table, flavor), keys)
			}
		case len(flavors) > 0:
			v.errorf(field.ErrorTypeForbidden, flavors[0].Pos, flavors[0].Path, "quota keys are given both on the %s and under flavors: use one form", owner)
		}
	}
	for _, q := range flavors {
		if v.a.Flavor(q.Flavor) == nil {
			v.errorf(field.ErrorTypeNotFound, q.Pos, q.Path, "unknown flavor %q (flavors: %s)", q.Flavor, v.flavorNames())
		}
	}
	quotas := []*agreement.Quota{}
	if shorthand != nil {
		quotas = append(quotas, shorthand)
	}
	quotas = append(quotas, flavors...)
	for _, q := range quotas {
		for _, n := range []agreement.Int{q.Guaranteed, q.Lendable, q.Borrow} {
			if n.IsSet() && n.Value < 0 {
				v.errorf(field.ErrorTypeInvalid, n.Pos, n.Path, "must not be negative, got %d", n.Value)
			}
			v.count(n)
		}
		if q.Lendable.IsSet() && q.Lendable.Value > q.Guaranteed.Value && q.Guaranteed.Value >= 0 {
			v.errorf(field.ErrorTypeInvalid, q.Lendable.Pos, q.Lendable.Path, "lendable (%d) exceeds guaranteed (%d): a %s can only lend GPUs it is guaranteed", q.Lendable.Value, q.Guaranteed.Value, owner)
		}
	}
}

// firstSet returns the quota key written first, so an error about the
// shorthand points at a key the user wrote rather than at the team's header.
// A key that failed to decode still has its position.
func firstSet(q *agreement.Quota) agreement.Int {
	var first agreement.Int
	for _, n := range []agreement.Int{q.Guaranteed, q.Lendable, q.Borrow} {
		if n.State == agreement.Unset {
			continue
		}
		if first.Pos.IsZero() || n.Pos.Before(first.Pos) {
			first = n
		}
	}
	if first.Pos.IsZero() {
		return agreement.Int{Pos: q.Pos, Path: q.Path}
	}
	return first
}

// capacity reports flavors whose teams are guaranteed more than exists. A
// department's guarantee stands for its teams' (which it covers, see
// departmentCoverage); teams without a department count for themselves.
func (v *validator) capacity() {
	for _, f := range v.a.Flavors {
		if !f.Capacity.IsSet() || f.Capacity.Value <= 0 {
			continue
		}
		var sum int64
		var parts []string
		for _, t := range v.a.Teams {
			if v.departmentOf(t) != nil {
				continue
			}
			if q := t.ByFlavor[f.Name]; q != nil && q.Guaranteed.Value > 0 {
				sum = addCapped(sum, q.Guaranteed.Value)
				parts = append(parts, fmt.Sprintf("%s %d", t.Name, q.Guaranteed.Value))
			}
		}
		who := "teams are"
		for _, d := range v.a.Departments {
			if q := d.ByFlavor[f.Name]; q != nil && q.Guaranteed.Value > 0 {
				sum = addCapped(sum, q.Guaranteed.Value)
				parts = append(parts, fmt.Sprintf("department %s %d", d.Name, q.Guaranteed.Value))
				who = "departments and teams are"
			}
		}
		if sum > f.Capacity.Value {
			v.errorf(field.ErrorTypeInvalid, f.Capacity.Pos, f.Capacity.Path, "%s guaranteed %d GPUs of flavor %s (%s) but its capacity is %d", who, sum, f.Name, strings.Join(parts, ", "), f.Capacity.Value)
		}
	}
}

// borrowing warns about borrow limits nobody can fill: a team can only
// borrow what the others in the pool lend. A team of a department borrows
// its department's surplus and what its other teams lend, and, within the
// department's borrow, what the rest of the pool lends to the department
// (outside); a team without a department borrows what the other such teams
// and the departments lend.
func (v *validator) borrowing() {
	for _, f := range v.a.Flavors {
		lend := func(q *agreement.Quota) int64 {
			if q != nil && q.Lendable.Value > 0 {
				return q.Lendable.Value
			}
			return 0
		}
		var poolLendable int64 // lent into the pool by teams without a department and by departments
		within := map[*agreement.Department]int64{}
		for _, t := range v.a.Teams {
			if d := v.departmentOf(t); d != nil {
				within[d] = addCapped(within[d], v.lendAtMost(t, f.Name))
			} else {
				poolLendable = addCapped(poolLendable, v.lendAtMost(t, f.Name))
			}
		}
		for _, d := range v.a.Departments {
			poolLendable = addCapped(poolLendable, lend(d.ByFlavor[f.Name]))
		}
		for _, t := range v.a.Teams {
			q := t.ByFlavor[f.Name]
			if q == nil || q.Borrow.Value <= 0 {
				continue
			}
			d := v.departmentOf(t)
			if d == nil {
				others := poolLendable - v.lendAtMost(t, f.Name)
				if q.Borrow.Value > others {
					v.warnf(field.ErrorTypeInvalid, q.Borrow.Pos, q.Borrow.Path, "borrow (%d) exceeds the %d GPUs of flavor %s the other teams can lend: at most %d can ever be borrowed", q.Borrow.Value, others, f.Name, others)
				}
				continue
			}
			dq := d.ByFlavor[f.Name]
			others := addCapped(within[d]-v.lendAtMost(t, f.Name), v.surplus(d, f.Name))
			others = addCapped(others, min(borrowOf(dq), poolLendable-lend(dq)))
			if q.Borrow.Value > others {
				v.warnf(field.ErrorTypeInvalid, q.Borrow.Pos, q.Borrow.Path, "borrow (%d) exceeds the %d GPUs of flavor %s that department %s's surplus, its other teams and (within the department's borrow) the rest of the pool can lend: at most %d can ever be borrowed", q.Borrow.Value, others, f.Name, d.Name, others)
			}
		}
		for _, d := range v.a.Departments {
			dq := d.ByFlavor[f.Name]
			if borrowOf(dq) <= 0 {
				continue
			}
			if others := poolLendable - lend(dq); dq.Borrow.Value > others {
				v.warnf(field.ErrorTypeInvalid, dq.Borrow.Pos, dq.Borrow.Path, "borrow (%d) exceeds the %d GPUs of flavor %s the other departments and the teams without a department can lend: at most %d can ever be borrowed", dq.Borrow.Value, others, f.Name, others)
			}
		}
	}
}

func (v *validator) topology() {
	t := v.a.Topology
	if t == nil {
		return
	}
	if len(t.Levels) == 0 {
		v.errorf(field.ErrorTypeRequired, t.Pos, t.Path.Child("levels"), "must list at least one node label, coarse to fine")
		v.suggest(`levels = ["cloud.provider.com/rack", "kubernetes.io/hostname"]`)
		return
	}
	if len(t.Levels) > 16 {
		v.errorf(field.ErrorTypeTooMany, t.Levels[16].Pos, t.Levels[16].Path, "at most 16 topology levels are supported")
	}
	seen := map[string]bool{}
	for _, l := range t.Levels {
		for _, msg := range validation.IsQualifiedName(l.Value) {
			v.errorf(field.ErrorTypeInvalid, l.Pos, l.Path, "%q is not a valid node label key: %s", l.Value, msg)
		}
		if seen[l.Value] {
			v.errorf(field.ErrorTypeDuplicate, l.Pos, l.Path, "level %q is listed twice", l.Value)
		}
		seen[l.Value] = true
	}
}
