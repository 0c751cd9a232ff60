package diff

import (
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
)

// PriorityChange is one priority before and after, with what each backend
// lets its work do: Kueue lets work of any priority borrow; KAI only
// preemptible work, whose PriorityClass value it keeps below
// kai.NonPreemptibleFrom (KAIValue is the value rendered for KAI).
type PriorityChange struct {
	Name         string       `json:"name"`
	Op           Op           `json:"op"`
	Value        Value[int32] `json:"value"`
	Preemptible  Value[bool]  `json:"preemptible"`
	BorrowsKueue Value[bool]  `json:"borrowsKueue"`
	BorrowsKAI   Value[bool]  `json:"borrowsKAI"`
	KAIValue     Value[int64] `json:"kaiValue"`
}

// comparePriorities lists every priority of both sides when any of them
// changes, and none when they are all the same: a diff shows which
// priorities can borrow where only when that is part of the change.
func comparePriorities(old, new *plan.Agreement) []PriorityChange {
	type side struct {
		pr  plan.Priority
		kai int64
	}
	byName := func(a *plan.Agreement) (map[string]side, []string) {
		out := map[string]side{}
		var names []string
		values := kai.ClassValues(a.Priorities)
		for _, pr := range a.Priorities {
			out[pr.Name] = side{pr, values[pr.Name]}
			names = append(names, pr.Name)
		}
		return out, names
	}
	olds, oldNames := byName(old)
	news, newNames := byName(new)
	var out []PriorityChange
	changed := false
	for _, name := range union(oldNames, newNames) {
		c := PriorityChange{Name: name}
		o, inOld := olds[name]
		n, inNew := news[name]
		yes := true
		if inOld {
			c.Value.Old, c.Preemptible.Old, c.BorrowsKueue.Old, c.BorrowsKAI.Old, c.KAIValue.Old = &o.pr.Value, &o.pr.Preemptible, &yes, &o.pr.Preemptible, &o.kai
		}
		if inNew {
			c.Value.New, c.Preemptible.New, c.BorrowsKueue.New, c.BorrowsKAI.New, c.KAIValue.New = &n.pr.Value, &n.pr.Preemptible, &yes, &n.pr.Preemptible, &n.kai
		}
		c.Op = opOf(inOld, inNew, c.Value.Changed() || c.Preemptible.Changed())
		changed = changed || c.Op != Unchanged
		out = append(out, c)
	}
	if !changed {
		return nil
	}
	return out
}

// priorityRows are the Priorities table's lines.
func priorityRows(s Summary) []row {
	var rows []row
	for _, p := range s.Priorities {
		rows = append(rows, row{p.Op, []string{marker(p.Op), p.Name, cellValue(p.Value, p.Op),
			yesNo(p.Preemptible, p.Op), yesNo(p.BorrowsKueue, p.Op), yesNo(p.BorrowsKAI, p.Op), cellValue(p.KAIValue, p.Op)}})
	}
	return rows
}

// yesNo prints a boolean cell as yes or no, as cellValue prints others.
func yesNo(v Value[bool], op Op) string {
	word := func(b *bool) *string {
		if b == nil {
			return nil
		}
		s := "no"
		if *b {
			s = "yes"
		}
		return &s
	}
	return cellValue(Value[string]{Old: word(v.Old), New: word(v.New)}, op)
}
