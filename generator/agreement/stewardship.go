package agreement

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/load"
)

// stewardshipKeys are the keys the pool, a department and a team share:
// who answers for that part of the agreement, and when it is next reviewed.
var stewardshipKeys = []string{"owners", "review_by"}

// DateLayout is how a review_by date is written: a TOML local date.
const DateLayout = time.DateOnly

// Date is a calendar date, such as review_by; Value is midnight UTC of it.
type Date = Scalar[time.Time]

// Stewardship is who answers for a part of the agreement (the pool, a
// department, a team) and when it is next due for review. It renders
// nothing: check, explain, diff and tenancy owners read it.
type Stewardship struct {
	// Owners are the owners key's handles (@user, @org/team, or an e-mail
	// address, as CODEOWNERS accepts), in the order written; Unset when the
	// key is absent, Pos the array's. Which handles are valid is
	// validate's to say.
	Owners   Scalar[[]Str]
	ReviewBy Date
}

// stewardship decodes the owners and review_by keys of table t at path.
func (d *decoder) stewardship(t *load.Fields, path *field.Path) Stewardship {
	var s Stewardship
	opath := path.Child("owners")
	s.Owners.Path = opath
	if v := t.Get("owners"); v != nil {
		s.Owners.Pos, s.Owners.State = v.Pos, Set
		s.Owners.Value = d.strings(v, opath)
		if v.Kind != load.Array || len(s.Owners.Value) < len(v.Items) {
			s.Owners.State = Invalid
		}
	}
	s.ReviewBy = d.date(t.Get("review_by"), path.Child("review_by"))
	return s
}

// date decodes a TOML local date (review_by = 2027-01-15). A string that
// holds one is refused with the fix: a quoted date is a string to TOML, and
// accepting both would make two spellings of one thing.
func (d *decoder) date(v *load.Value, path *field.Path) Date {
	if v == nil {
		return Date{Path: path}
	}
	out := Date{Pos: v.Pos, Path: path, State: Invalid}
	if v.Kind == load.DateTime {
		if t, err := time.Parse(DateLayout, v.Raw); err == nil {
			out.Value, out.State = t, Set
			return out
		}
		d.r.Errorf(field.ErrorTypeTypeInvalid, v.Pos, path, "must be a date without a time, such as 2027-01-15, got %s", v.Raw)
		return out
	}
	if v.Kind == load.String {
		if _, err := time.Parse(DateLayout, v.Str); err == nil {
			d.r.Errorf(field.ErrorTypeTypeInvalid, v.Pos, path, "must be a TOML date, written without quotes: %s", v.Str)
			d.r.Suggest("review_by = " + v.Str)
			return out
		}
	}
	d.typeError(v, path, "a date such as 2027-01-15")
	return out
}
