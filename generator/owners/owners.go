// Package owners says who answers for each part of an agreement and for
// each file it is written in: a team's owners, else its department's, else
// the pool's. tenancy owners prints the files' as a CODEOWNERS block; diff
// names the parts' when a change needs their approval.
package owners

import (
	"slices"

	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Pool returns the pool's owners: they answer for the flavors, their
// capacity and the pool itself.
func Pool(p *plan.Agreement) []string { return p.Owners }

// Department returns a department's owners: its own, else the pool's.
func Department(p *plan.Agreement, d *plan.Department) []string {
	if len(d.Owners) > 0 {
		return d.Owners
	}
	return Pool(p)
}

// Team returns a team's owners: its own, else its department's, else the
// pool's.
func Team(p *plan.Agreement, t *plan.Team) []string {
	if len(t.Owners) > 0 {
		return t.Owners
	}
	if d := p.Department(t.Department); d != nil {
		return Department(p, d)
	}
	return Pool(p)
}

// File is one file of the agreement and who answers for it.
type File struct {
	// Name is the file as diagnostics name it: the agreement's path, or an
	// included file's joined to the agreement's directory.
	Name string
	// Owners answer for every part written in the file, each once, in the
	// order the parts are planned (departments, then teams, by name); for
	// the agreement's own file, the pool's. Empty when nobody is named.
	Owners []string
}

// Files lists the agreement's own file, then each file it includes in the
// order read, with their owners. A file holding several parts lists the
// owners of every one: CODEOWNERS cannot give a part of a file to someone.
func Files(p *plan.Agreement) []File {
	out := []File{{Name: p.File, Owners: slices.Clone(Pool(p))}}
	index := map[string]int{}
	for _, name := range p.Includes {
		index[name] = len(out)
		out = append(out, File{Name: name})
	}
	add := func(file string, owners []string) {
		i, ok := index[file]
		if !ok {
			return // the agreement's own file: the pool's
		}
		for _, o := range owners {
			if !slices.Contains(out[i].Owners, o) {
				out[i].Owners = append(out[i].Owners, o)
			}
		}
	}
	for i := range p.Departments {
		d := &p.Departments[i]
		add(d.File, Department(p, d))
	}
	for i := range p.Teams {
		t := &p.Teams[i]
		add(t.File, Team(p, t))
	}
	return out
}
