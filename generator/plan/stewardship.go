package plan

import (
	"time"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// Stewardship is who answers for a part of the agreement (the pool, a
// department or a team) and when it is next due for review. No family
// renders it; check, explain, diff and tenancy owners read it.
type Stewardship struct {
	// Owners are the handles of the owners key, in the file's order; nil
	// when the part names none.
	Owners       []string
	OwnersOrigin diag.Origin // the owners key's value; zero when absent
	// ReviewBy is the date of the next review; zero when none is set.
	ReviewBy       time.Time
	ReviewByOrigin diag.Origin
	// File is the file the part is written in: where its owners answer for
	// it. "" for the agreement's own file (and for the pool, always).
	File string
}

// buildStewardship plans the owners and review_by of a part written at pos.
func buildStewardship(s agreement.Stewardship, pos diag.Pos) Stewardship {
	out := Stewardship{File: pos.File}
	if s.Owners.IsSet() {
		for _, o := range s.Owners.Value {
			out.Owners = append(out.Owners, o.Value)
		}
		out.OwnersOrigin = origin(s.Owners.Pos, s.Owners.Path)
	}
	if s.ReviewBy.IsSet() {
		out.ReviewBy = s.ReviewBy.Value
		out.ReviewByOrigin = origin(s.ReviewBy.Pos, s.ReviewBy.Path)
	}
	return out
}
