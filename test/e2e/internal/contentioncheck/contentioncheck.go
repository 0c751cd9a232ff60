// Package contentioncheck is the scheduler-independent half of the
// contention proofs: it asks `tenancy explain --contention --output json`
// what each team runs in each scenario, and compares that with the counts a
// suite read from its real scheduler. A suite floods the scenario's busy
// teams with 1-GPU work, waits until admission is stable, counts what is
// admitted per team and flavor, and hands the counts to Compare.
//
// It reads explain's documented JSON (README, "Contention"), not the
// generator's types: the proof is of what the CLI prints.
package contentioncheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
)

// Share is a team's outcome: exactly Min when Min == Max, else anywhere
// from Min to Max as the order in which work arrives decides.
type Share struct {
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// Decided reports whether the scheduler decides without the arrival order.
func (s Share) Decided() bool { return s.Min == s.Max }

// Outcome, Flavor and Report are explain's JSON, the fields the proofs read.
type Outcome struct {
	Team    string `json:"team"`
	Alone   Share  `json:"alone"`
	AllBusy Share  `json:"allBusy"`
	Busy    *Share `json:"busy"`
}

type Flavor struct {
	Flavor string    `json:"flavor"`
	Teams  []Outcome `json:"teams"`
}

type Report struct {
	Backend string   `json:"backend"`
	Busy    []string `json:"busy"`
	Flavors []Flavor `json:"flavors"`
}

// Explain runs `tenancy explain --contention --output json --backend
// backend [--busy busy] file` in dir and returns backend's report.
func Explain(ctx context.Context, tenancy, dir, file, backend string, busy []string) (*Report, error) {
	args := []string{"explain", "--contention", "--output", "json", "--backend", backend}
	if len(busy) > 0 {
		args = append(args, "--busy", strings.Join(busy, ","))
	}
	cmd := exec.CommandContext(ctx, tenancy, append(args, file)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("tenancy %s %s: %w\n%s", strings.Join(args, " "), file, err, stderr.String())
	}
	var out struct {
		Reports []*Report `json:"reports"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("tenancy %s %s: %w", strings.Join(args, " "), file, err)
	}
	for _, r := range out.Reports {
		if r.Backend == backend {
			return r, nil
		}
	}
	return nil, fmt.Errorf("tenancy %s %s: no %s report", strings.Join(args, " "), file, backend)
}

// Key is a team in a flavor.
type Key struct{ Team, Flavor string }

func (k Key) String() string { return k.Team + "/" + k.Flavor }

// Scenario is one set of busy teams and what explain says every team runs
// in it, per flavor (0 for an idle team).
type Scenario struct {
	Name string
	Busy []string
	Want map[Key]Share
}

// Scenarios are the scenarios of a report without --busy: each team alone,
// then every team busy.
func Scenarios(r *Report) []Scenario {
	var teams []string
	for _, f := range r.Flavors {
		for _, o := range f.Teams {
			if !slices.Contains(teams, o.Team) {
				teams = append(teams, o.Team)
			}
		}
	}
	sort.Strings(teams)
	var out []Scenario
	for _, team := range teams {
		out = append(out, scenario(r, team+" alone", []string{team}, func(o Outcome) Share {
			if o.Team == team {
				return o.Alone
			}
			return Share{}
		}))
	}
	return append(out, scenario(r, "all busy", teams, func(o Outcome) Share { return o.AllBusy }))
}

// BusyScenario is the scenario of a report with --busy asked: the teams
// the report names busy (a department's name in asked stands for its
// teams), the rest idle.
func BusyScenario(r *Report, asked []string) (Scenario, error) {
	if len(r.Busy) == 0 {
		return Scenario{}, fmt.Errorf("the %s report has no busy set", r.Backend)
	}
	var missing []string
	s := scenario(r, "busy "+strings.Join(asked, ","), r.Busy, func(o Outcome) Share {
		if o.Busy == nil {
			missing = append(missing, o.Team)
			return Share{}
		}
		return *o.Busy
	})
	if len(missing) > 0 {
		return Scenario{}, fmt.Errorf("the %s report has no busy outcome for %v", r.Backend, missing)
	}
	return s, nil
}

func scenario(r *Report, name string, busy []string, pick func(Outcome) Share) Scenario {
	s := Scenario{Name: name, Busy: busy, Want: map[Key]Share{}}
	for _, f := range r.Flavors {
		for _, o := range f.Teams {
			s.Want[Key{o.Team, f.Flavor}] = pick(o)
		}
	}
	return s
}

// Compare holds the admitted counts to the scenario: a decided outcome
// must be met exactly, a range (the arrival order decides: Kueue serves
// borrowers first come) within its bounds; a count for a team and flavor explain does not list
// must be 0. It returns one line per team and flavor, saying which rule
// applied, and whether any failed.
func Compare(s Scenario, got map[Key]int64) (lines []string, ok bool) {
	keys := make([]Key, 0, len(s.Want))
	for k := range s.Want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, listed := s.Want[k]; !listed {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	ok = true
	for _, k := range keys {
		want, listed := s.Want[k]
		n := got[k]
		var line string
		switch {
		case !listed:
			line = fmt.Sprintf("%s: admitted %d, explain does not list it (0)", k, n)
			if n != 0 {
				line = "MISMATCH " + line
				ok = false
			}
		case want.Decided():
			line = fmt.Sprintf("%s: admitted %d, explain %d (decided: must be equal)", k, n, want.Min)
			if n != want.Min {
				line = "MISMATCH " + line
				ok = false
			}
		default:
			line = fmt.Sprintf("%s: admitted %d, explain %d-%d (a range, as the arrival order decides: must be within)", k, n, want.Min, want.Max)
			if n < want.Min || n > want.Max {
				line = "MISMATCH " + line
				ok = false
			}
		}
		lines = append(lines, line)
	}
	return lines, ok
}
