package kueue

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/contentioncheck"
)

// Each check is one agreement: explain's scenarios without --busy (each
// team alone, all busy) and with each busy set, run in the real Kueue.

// TestContentionReference: the root tenancy.toml. Every outcome is decided
// (training and research borrow only from each other, inference lends
// nothing), so each count must equal explain's, also when research's flood
// comes first and borrows training's lent 8: training takes them back
// (reclaimWithinCohort Any), so the order changes nothing.
func TestContentionReference(t *testing.T) {
	prove(t, "tenancy.toml", [][]string{{"training", "research"}, {"research", "inference"}},
		arrival{"all busy", [][]string{{"research"}, {"training", "inference"}}})
}

// TestContentionDepartments: examples/departments, two department Cohorts
// and a team in the pool. Busy "science" (a department stands for its
// teams) has ranges inside the department; physics, ads and platform busy
// are decided across the tree (surplus, department lending and borrowing
// limits); all busy has ranges everywhere but the guarantees.
func TestContentionDepartments(t *testing.T) {
	prove(t, filepath.Join("examples", "departments", "tenancy.toml"), [][]string{{"science"}, {"physics", "ads", "platform"}})
}

// TestContentionThreeTeams: testdata/contention-three.toml, three teams
// with different lendable and borrow and weights Kueue ignores without
// fair sharing: b and c busy and a and b busy are decided by the limits,
// a and c busy is a first-come range the weights do not narrow.
func TestContentionThreeTeams(t *testing.T) {
	prove(t, filepath.Join("test", "e2e", "testdata", "contention-three.toml"), [][]string{{"b", "c"}, {"a", "b"}, {"a", "c"}})
}

// TestContentionReclaimWait: testdata/reclaim-wait.toml, where research
// (reclaim = "wait", Kueue's reclaimWithinCohort Never) lends all its 8.
// Every team busy, the borrower training first: research cannot take
// back what training borrowed while training's Jobs run, so what each
// runs depends on who came first (explain said 8 and 16, decided, until
// this check measured 0 and 24). Only this scenario: alone and the busy
// sets are the reference's, which TestContentionReference covers, and
// all busy at once lands anywhere in the ranges.
func TestContentionReclaimWait(t *testing.T) {
	report.Begin(t, env.cp, env.startErr, 2000)
	file := filepath.Join("test", "e2e", "testdata", "reclaim-wait.toml")
	queues := useAgreement(t, file)
	r, err := contentioncheck.Explain(ctxFor(t), env.tenancy, env.repoRoot, file, "kueue", nil)
	if err != nil {
		t.Fatal(err)
	}
	all := contentioncheck.Scenarios(r)
	s := all[len(all)-1]
	run(t, queues, s, arrival{s.Name, [][]string{{"training"}, {"research", "inference"}}})
}

// TestContentionMultiFlavor: examples/multi-flavor, two flavors of two
// resources (h100 whole GPUs, a100-mig 1g.10gb slices), each busy team
// flooding each resource its ClusterQueue has, counted per team and
// flavor. Notebooks and inference busy, notebooks first: on h100
// notebooks borrows 4 of the idle teams' lent GPUs (decided); on a100-mig
// inference reclaims with "wait", so notebooks keeps inference's lent 14
// (explain: inference 14-28, notebooks 28-42; Kueue 14 and 42).
func TestContentionMultiFlavor(t *testing.T) {
	report.Begin(t, env.cp, env.startErr, 2000)
	file := filepath.Join("examples", "multi-flavor", "tenancy.toml")
	queues := useAgreement(t, file)
	busy := []string{"notebooks", "inference"}
	r, err := contentioncheck.Explain(ctxFor(t), env.tenancy, env.repoRoot, file, "kueue", busy)
	if err != nil {
		t.Fatal(err)
	}
	s, err := contentioncheck.BusyScenario(r, busy)
	if err != nil {
		t.Fatal(err)
	}
	run(t, queues, s, arrival{s.Name, [][]string{{"notebooks"}, {"inference"}}})
}

// arrival runs a scenario again with its busy teams arriving in waves.
type arrival struct {
	scenario string
	waves    [][]string
}

// run runs scenario s, in the order a gives when a is set.
func run(t *testing.T, queues map[string]teamQueue, s contentioncheck.Scenario, a ...arrival) {
	t.Helper()
	name := s.Name
	var waves [][]string
	if len(a) > 0 {
		waves = a[0].waves
		name += ", " + strings.Join(waves[0], ",") + " first"
	}
	t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
		runScenario(t, queues, s, waves...)
	})
}

// prove applies the agreement at file (relative to the repository root)
// and runs every scenario of explain --contention on it, the busy sets'
// after the alone and all-busy ones, and again in each arrival order
// given for it.
func prove(t *testing.T, file string, busySets [][]string, arrivals ...arrival) {
	t.Helper()
	report.Begin(t, env.cp, env.startErr, 2000)
	queues := useAgreement(t, file)
	ctx := ctxFor(t)
	r, err := contentioncheck.Explain(ctx, env.tenancy, env.repoRoot, file, "kueue", nil)
	if err != nil {
		t.Fatal(err)
	}
	scenarios := contentioncheck.Scenarios(r)
	for _, busy := range busySets {
		r, err := contentioncheck.Explain(ctx, env.tenancy, env.repoRoot, file, "kueue", busy)
		if err != nil {
			t.Fatal(err)
		}
		s, err := contentioncheck.BusyScenario(r, busy)
		if err != nil {
			t.Fatal(err)
		}
		scenarios = append(scenarios, s)
	}
	for _, s := range scenarios {
		run(t, queues, s)
		for _, a := range arrivals {
			if a.scenario == s.Name {
				run(t, queues, s, a)
			}
		}
	}
}

// runScenario floods the busy teams' queues, waits until Kueue's
// admissions are stable, compares the admitted counts with explain's and
// clears the Jobs. With waves, the busy teams arrive in that order instead
// of together, each wave once the one before has settled: explain's
// decided numbers must hold whatever the order of arrival.
func runScenario(t *testing.T, queues map[string]teamQueue, s contentioncheck.Scenario, waves ...[]string) {
	t.Cleanup(func() { clearJobs(t, queues) })
	if len(waves) == 0 {
		waves = [][]string{s.Busy}
	}
	n := 0
	var arrived []string
	var got map[contentioncheck.Key]int64
	for _, wave := range waves {
		n += flood(t, queues, wave)
		arrived = append(arrived, wave...)
		got = waitStable(t, queues, arrived, n, quiet)
	}
	lines, ok := contentioncheck.Compare(s, got)
	if !ok {
		t.Logf("%s: a mismatch after %s of quiet; looking again after %s:\n  %s", s.Name, quiet, recheck, strings.Join(lines, "\n  "))
		got = waitStable(t, queues, arrived, n, recheck)
		lines, ok = contentioncheck.Compare(s, got)
	}
	t.Logf("%s, admitted by Kueue against explain --contention:\n  %s", s.Name, strings.Join(lines, "\n  "))
	if !ok {
		t.Errorf("Kueue's admissions differ from explain --contention (%s)\n%s", s.Name, clusterState(context.Background()))
	}
}

// teamQueue is where a team submits: its namespace and LocalQueue, and
// the most its ClusterQueue can ever admit (nominal quota plus borrowing
// limit over its flavors), read from the render so that a flood's size
// does not rest on explain's numbers.
type teamQueue struct {
	ns, queue string
	reach     map[corev1.ResourceName]int64
}

func (q teamQueue) String() string { return fmt.Sprintf("%s/%s (reach %v)", q.ns, q.queue, q.reach) }
