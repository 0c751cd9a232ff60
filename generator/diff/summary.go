package diff

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Value is a before → after pair. A nil side is absent: the team, flavor
// or agreement does not exist there.
type Value[T comparable] struct {
	Old *T `json:"old,omitempty"`
	New *T `json:"new,omitempty"`
}

func pair[T comparable](old, new *T) Value[T] { return Value[T]{Old: old, New: new} }

// Changed reports whether the two sides differ, absence included.
func (v Value[T]) Changed() bool {
	if v.Old == nil || v.New == nil {
		return v.Old != v.New
	}
	return *v.Old != *v.New
}

// String prints "old → new" when changed, the value alone when not, and "–"
// for an absent side.
func (v Value[T]) String() string {
	if !v.Changed() {
		return show(v.New)
	}
	return show(v.Old) + " → " + show(v.New)
}

func show[T any](p *T) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprint(*p)
}

// poolName names the pool for headings: "gpu-pool", "old → new" when it is
// renamed, and "gpu-pool (added)" or "(removed)" when the file is.
func (s Summary) poolName() string {
	switch {
	case s.Pool.Old == nil && s.Pool.New != nil:
		return *s.Pool.New + " (added)"
	case s.Pool.New == nil && s.Pool.Old != nil:
		return *s.Pool.Old + " (removed)"
	}
	return s.Pool.String()
}

// Summary is what the change means for the agreement, from the two plans.
type Summary struct {
	Pool    Value[string]  `json:"pool"`
	Flavors []FlavorChange `json:"flavors"`
	Teams   []TeamChange   `json:"teams"`
	// Departments compares the departments of both sides; absent when
	// neither has any.
	Departments []DepartmentChange `json:"departments,omitempty"`
	// Moves lists the teams whose department changes.
	Moves []Move `json:"moves,omitempty"`
	// Windows says in words which lending windows are added and removed;
	// absent when none changes.
	Windows []string `json:"windows,omitempty"`
	// Pools says in words what changes of KAI's node pools (renamed
	// queues, pool labels, GPU sharing), on a report rendered for KAI;
	// absent when none changes.
	Pools []string `json:"pools,omitempty"`
	// Priorities lists every priority, and which backends let its work
	// borrow, when any priority changes; it is empty otherwise.
	Priorities []PriorityChange `json:"priorities,omitempty"`
	// Contention lists, before → after, what each team the change touches
	// runs alone and with every team busy, on the backend rendered for, in
	// every state of the lending windows; absent when none is touched or a
	// side is missing.
	Contention []ContentionChange `json:"contention,omitempty"`
	// Losses calls out every team that loses guaranteed GPUs of a flavor,
	// including teams and flavors that are removed.
	Losses []Loss `json:"losses"`
	// NewWarnings are validation warnings of the new side that the old side
	// did not have (matched by field and message, not line, since lines move).
	NewWarnings []Warning `json:"newWarnings"`
	// ChangedWarnings are warnings of both sides on the same field that
	// say the same but for some of their numbers (a borrow that can be
	// filled less): one change, not a new warning and a gone one.
	ChangedWarnings []WarningChange `json:"changedWarnings"`
	// RemovedNamespaces are Namespaces the new side no longer renders: with
	// pruning on, Argo CD deletes them and every workload in them.
	RemovedNamespaces []string `json:"removedNamespaces"`
	// NamespaceSyncOptions holds the Argo CD sync options (the guardrails'
	// Prune=false,Delete=false or Prune=confirm) of removed Namespaces that
	// have them: what Argo CD will and will not delete.
	NamespaceSyncOptions map[string]string `json:"namespaceSyncOptions,omitempty"`
	// Approvals names whose approval the change needs, by rule (see
	// Approval), the pool first, then departments and teams by name.
	Approvals []Approval `json:"approvals"`
	// NodeLoss says, per flavor of the new side, what losing one node
	// (gpus_per_node GPUs) would break.
	NodeLoss []NodeLoss `json:"nodeLoss,omitempty"`
	// ReviewsDue says which parts of the new side are past their
	// review_by, one line each; the caller fills it (SetReviewsDue), as
	// only it knows today's date. Absent when none is.
	ReviewsDue []string `json:"reviewsDue,omitempty"`
}

// Warning is a validation warning of the new side.
type Warning struct {
	generator.Diagnostic
}

// Position is file:line:col, as far as known.
func (w Warning) Position() string {
	s := w.File
	if w.Pos.Line > 0 {
		s += ":" + strconv.Itoa(w.Pos.Line)
		if w.Pos.Column > 0 {
			s += ":" + strconv.Itoa(w.Pos.Column)
		}
	}
	return s
}

// Text is the diagnostic without its severity, which the caller says:
// "new.toml:15:10: teams.training.borrow: borrow (8) exceeds ...".
func (w Warning) Text() string {
	s := w.Position() + ": "
	if f := w.Field(); f != "" {
		s += f + ": "
	}
	return s + w.Message
}

// MarshalJSON spells the diagnostic's fields the way the rest of the report
// does, in lower camel case.
func (w Warning) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Severity string `json:"severity"`
		File     string `json:"file"`
		Line     int    `json:"line,omitempty"`
		Column   int    `json:"column,omitempty"`
		Field    string `json:"field,omitempty"`
		Message  string `json:"message"`
		// Suggestion is the TOML that fixes it, as in check's output.
		Suggestion string `json:"suggestion,omitempty"`
		Text       string `json:"text"`
	}{string(w.Severity), w.File, w.Pos.Line, w.Pos.Column, w.Field(), w.Message, w.Suggestion, w.String()})
}

// WarningChange is a warning of both sides whose numbers differ.
type WarningChange struct {
	Old Warning `json:"old"`
	New Warning `json:"new"`
}

// number is a number standing alone in a message: "6" in "borrow (6)",
// not the 100 of flavor h100.
var number = regexp.MustCompile(`\b[0-9]+\b`)

// Message is the new message with each number that changed written
// "old → new": "borrow (6) exceeds the 5 → 4 GPUs of flavor h100 ...".
func (c WarningChange) Message() string {
	olds := number.FindAllString(c.Old.Message, -1)
	i := 0
	return number.ReplaceAllStringFunc(c.New.Message, func(n string) string {
		defer func() { i++ }()
		if i < len(olds) && olds[i] != n {
			return olds[i] + " → " + n
		}
		return n
	})
}

// Text is the new side's position and field with Message.
func (c WarningChange) Text() string {
	w := c.New
	w.Message = c.Message()
	return w.Text()
}

// FlavorChange is one flavor of the pool before and after.
type FlavorChange struct {
	Name     string        `json:"name"`
	Op       Op            `json:"op"`
	Resource Value[string] `json:"resource"`
	Capacity Value[int64]  `json:"capacity"`
	// Guaranteed is what the pool guarantees of this flavor: every
	// department's guarantee and every team's without a department.
	Guaranteed Value[int64] `json:"guaranteed"`
}

// TeamChange is one team before and after.
type TeamChange struct {
	Name    string        `json:"name"`
	Op      Op            `json:"op"`
	Weight  Value[int64]  `json:"weight"`
	Reclaim Value[string] `json:"reclaim"`
	// Department is the team's department on each side, a side without
	// one left out; absent from JSON when neither side has one.
	Department Value[string] `json:"department,omitzero"`
	Quotas     []QuotaChange `json:"quotas"`
}

// QuotaChange is a team's share of one flavor before and after.
type QuotaChange struct {
	Flavor     string       `json:"flavor"`
	Op         Op           `json:"op"`
	Guaranteed Value[int64] `json:"guaranteed"`
	Lendable   Value[int64] `json:"lendable"`
	Borrow     Value[int64] `json:"borrow"`
	// DepartmentSurplus is, in a team's row, its department's surplus of
	// the flavor over its teams' guarantees on each side (what the team
	// borrows first), a side where the team has no department left out;
	// absent from JSON when neither has one, and in a department's row.
	DepartmentSurplus Value[int64] `json:"departmentSurplus,omitzero"`
}

// Loss is a team that ends up guaranteed fewer GPUs of a flavor.
type Loss struct {
	Team   string `json:"team"`
	Flavor string `json:"flavor"`
	Old    int64  `json:"old"`
	New    int64  `json:"new"`
}

// String reads as a sentence for reviewers.
func (l Loss) String() string {
	return fmt.Sprintf("team %s loses %d guaranteed %s GPUs (%d → %d)", l.Team, l.Old-l.New, l.Flavor, l.Old, l.New)
}

func (s Summary) changed() bool {
	if s.Pool.Changed() {
		return true
	}
	for _, f := range s.Flavors {
		if f.Op != Unchanged {
			return true
		}
	}
	for _, t := range s.Teams {
		if t.Op != Unchanged {
			return true
		}
	}
	for _, d := range s.Departments {
		if d.Op != Unchanged {
			return true
		}
	}
	return len(s.Priorities) > 0 || len(s.Moves) > 0 || len(s.Windows) > 0 || len(s.Pools) > 0
}

func summarize(old, new *plan.Agreement, oldWarn, newWarn []generator.Diagnostic) Summary {
	s := Summary{Losses: []Loss{}, RemovedNamespaces: []string{}}
	if old != nil {
		s.Pool.Old = &old.Name
	}
	if new != nil {
		s.Pool.New = &new.Name
	}
	// An absent side compares as an agreement with nothing in it: the
	// pool's name, set above, is all that tells the two apart, so the
	// comparisons below need no nil checks of their own.
	if old == nil {
		old = &plan.Agreement{}
	}
	if new == nil {
		new = &plan.Agreement{}
	}
	s.Flavors = compareFlavors(old, new)
	s.Teams = compareTeams(old, new)
	s.Departments = compareDepartments(old, new)
	s.Moves = moves(old, new)
	s.Windows = compareWindows(old, new)
	s.Priorities = comparePriorities(old, new)
	s.Approvals = approvals(old, new, s)
	s.NodeLoss = nodeLoss(new)
	for _, t := range s.Teams {
		for _, q := range t.Quotas {
			o, n := deref(q.Guaranteed.Old), deref(q.Guaranteed.New)
			if n < o {
				s.Losses = append(s.Losses, Loss{Team: t.Name, Flavor: q.Flavor, Old: o, New: n})
			}
		}
	}
	s.NewWarnings, s.ChangedWarnings = compareWarnings(oldWarn, newWarn)
	return s
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// names lists the items' names in their order.
func names[T any](items []T, name func(T) string) []string {
	var out []string
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

func flavorName(f plan.Flavor) string         { return f.Name }
func teamName(t plan.Team) string             { return t.Name }
func departmentName(d plan.Department) string { return d.Name }
func quotaFlavor(q plan.Quota) string         { return q.Flavor }

// union returns the names of both sides in the new side's order (the
// plan's: teams by name, flavors in order of preference), followed by the
// names only the old side has.
func union(old, new []string) []string {
	out := slices.Clone(new)
	inNew := make(map[string]bool, len(new)) // 10,000 teams: no scan per name
	for _, n := range new {
		inNew[n] = true
	}
	for _, n := range old {
		if !inNew[n] {
			out = append(out, n)
		}
	}
	return out
}

func opOf(inOld, inNew, changed bool) Op {
	switch {
	case !inOld:
		return Added
	case !inNew:
		return Removed
	case changed:
		return Changed
	}
	return Unchanged
}

func compareFlavors(old, new *plan.Agreement) []FlavorChange {
	out := []FlavorChange{}
	for _, name := range union(names(old.Flavors, flavorName), names(new.Flavors, flavorName)) {
		c := FlavorChange{Name: name}
		of, nf := old.Flavor(name), new.Flavor(name)
		if of != nil {
			g := gpu.Committed(old, gpu.Raw, gpu.Flavor(name))
			c.Resource.Old, c.Capacity.Old, c.Guaranteed.Old = &of.Resource, &of.Capacity, &g
		}
		if nf != nil {
			g := gpu.Committed(new, gpu.Raw, gpu.Flavor(name))
			c.Resource.New, c.Capacity.New, c.Guaranteed.New = &nf.Resource, &nf.Capacity, &g
		}
		c.Op = opOf(of != nil, nf != nil, c.Resource.Changed() || c.Capacity.Changed() || c.Guaranteed.Changed())
		out = append(out, c)
	}
	return out
}

// teamsByName indexes a's teams by name: the teams table looks up every
// team on both sides, which a scan per team would make quadratic (10,000
// teams: about a second).
func teamsByName(a *plan.Agreement) map[string]*plan.Team {
	m := make(map[string]*plan.Team, len(a.Teams))
	for i := range a.Teams {
		m[a.Teams[i].Name] = &a.Teams[i]
	}
	return m
}

func compareTeams(old, new *plan.Agreement) []TeamChange {
	out := []TeamChange{}
	all := union(names(old.Teams, teamName), names(new.Teams, teamName))
	slices.Sort(all) // a removed team in its place, not at the end
	oldTeams, newTeams := teamsByName(old), teamsByName(new)
	for _, name := range all {
		ot, nt := oldTeams[name], newTeams[name]
		c := TeamChange{Name: name}
		if ot != nil {
			r := string(ot.Reclaim)
			c.Weight.Old, c.Reclaim.Old = &ot.Weight, &r
		}
		if nt != nil {
			r := string(nt.Reclaim)
			c.Weight.New, c.Reclaim.New = &nt.Weight, &r
		}
		c.Department = pair(departmentOf(ot), departmentOf(nt))
		for _, fl := range union(quotaFlavors(ot), quotaFlavors(nt)) {
			q := teamQuotaChange(fl, quotaOf(ot, fl), quotaOf(nt, fl))
			q.DepartmentSurplus = pair(surplusOf(old, ot, fl), surplusOf(new, nt, fl))
			if q.Op == Unchanged && q.DepartmentSurplus.Changed() {
				q.Op = Changed
			}
			c.Quotas = append(c.Quotas, q)
		}
		c.Op = opOf(ot != nil, nt != nil, c.Weight.Changed() || c.Reclaim.Changed() || c.Department.Changed() || slices.ContainsFunc(c.Quotas, QuotaChange.changed))
		out = append(out, c)
	}
	return out
}

// departmentOf is the team's department; nil without a team or a
// department.
func departmentOf(t *plan.Team) *string {
	if t == nil || t.Department == "" {
		return nil
	}
	return &t.Department
}

// surplusOf is the surplus of flavor of team t's department in a; nil
// without a team, a department or the flavor.
func surplusOf(a *plan.Agreement, t *plan.Team, flavor string) *int64 {
	if t == nil || t.Department == "" {
		return nil
	}
	_, s := departmentQuota(a, a.Department(t.Department), flavor)
	return s
}

// hasDepartments reports whether either side has departments: only then
// does the teams table get its department columns, so agreements without
// departments read as they always did.
func (s Summary) hasDepartments() bool { return len(s.Departments) > 0 }

// teamQuotaChange is a team's quota of one flavor before and after; a nil
// side holds none of it.
func teamQuotaChange(flavor string, old, new *plan.Quota) QuotaChange {
	q := quotaChange(flavor, old, new)
	q.Op = opOf(old != nil, new != nil, q.Guaranteed.Changed() || q.Lendable.Changed() || q.Borrow.Changed())
	if q.sameNumbers() {
		// A quota of zero and no quota mean the same: a flavor added to
		// the pool does not change the teams that get none of it.
		q.Op = Unchanged
	}
	return q
}

// quotaChange pairs the numbers of a share of one flavor, a team's or a
// department's; a nil side holds none. The caller sets Op: what counts as a
// change differs between the two.
func quotaChange(flavor string, old, new *plan.Quota) QuotaChange {
	q := QuotaChange{Flavor: flavor}
	if old != nil {
		q.Guaranteed.Old, q.Lendable.Old, q.Borrow.Old = &old.Guaranteed, &old.Lendable, &old.Borrow
	}
	if new != nil {
		q.Guaranteed.New, q.Lendable.New, q.Borrow.New = &new.Guaranteed, &new.Lendable, &new.Borrow
	}
	return q
}

func (q QuotaChange) changed() bool { return q.Op != Unchanged }

// quotaOf returns the team's quota of a flavor; nil when the team is
// absent or holds no quota of it.
func quotaOf(t *plan.Team, flavor string) *plan.Quota {
	if t == nil {
		return nil
	}
	for i := range t.Quotas {
		if t.Quotas[i].Flavor == flavor {
			return &t.Quotas[i]
		}
	}
	return nil
}

func quotaFlavors(t *plan.Team) []string {
	if t == nil {
		return nil
	}
	return names(t.Quotas, quotaFlavor)
}

// Shown reports whether a quota row is worth a line: teams hold a quota for
// every flavor of the agreement, most of them zero, and a table full of
// zeros hides the rows that matter.
func (q QuotaChange) Shown() bool {
	for _, v := range []Value[int64]{q.Guaranteed, q.Lendable, q.Borrow} {
		if deref(v.Old) != 0 || deref(v.New) != 0 {
			return true
		}
	}
	return false
}

func (q QuotaChange) sameNumbers() bool {
	for _, v := range []Value[int64]{q.Guaranteed, q.Lendable, q.Borrow} {
		if deref(v.Old) != deref(v.New) {
			return false
		}
	}
	return true
}

// ShownQuotas returns the quota rows worth a line, at least one per team so
// that every team appears.
func (t TeamChange) ShownQuotas() []QuotaChange {
	var out []QuotaChange
	for _, q := range t.Quotas {
		if q.Shown() {
			out = append(out, q)
		}
	}
	if len(out) == 0 && len(t.Quotas) > 0 {
		out = t.Quotas[:1]
	}
	return out
}

// compareWarnings matches the new side's warnings to the old side's by
// severity, field and message (not line: lines move), then those left over
// by severity, field and message with its numbers masked: what is left of
// the new side after the first match is new, after the second changed.
func compareWarnings(old, new []generator.Diagnostic) (added []Warning, changed []WarningChange) {
	exact := func(d generator.Diagnostic) string {
		return strings.Join([]string{string(d.Severity), d.Field(), d.Message}, "\x00")
	}
	masked := func(d generator.Diagnostic) string {
		return strings.Join([]string{string(d.Severity), d.Field(), number.ReplaceAllString(d.Message, "#")}, "\x00")
	}
	seen := map[string]int{}
	for _, d := range old {
		seen[exact(d)]++
	}
	var left []generator.Diagnostic
	for _, d := range new {
		if seen[exact(d)] > 0 {
			seen[exact(d)]--
			continue
		}
		left = append(left, d)
	}
	// The old warnings no new one matched exactly, by masked message, in
	// their order, so two changed warnings of one field pair up in order.
	unmatched := map[string][]generator.Diagnostic{}
	for _, d := range old {
		if seen[exact(d)] > 0 {
			seen[exact(d)]--
			unmatched[masked(d)] = append(unmatched[masked(d)], d)
		}
	}
	added, changed = []Warning{}, []WarningChange{}
	for _, d := range left {
		if olds := unmatched[masked(d)]; len(olds) > 0 {
			unmatched[masked(d)] = olds[1:]
			changed = append(changed, WarningChange{Old: Warning{olds[0]}, New: Warning{d}})
			continue
		}
		added = append(added, Warning{d})
	}
	return added, changed
}
