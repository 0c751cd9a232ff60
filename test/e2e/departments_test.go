package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestDepartments: the department semantics of issue 20 in real Kueue
// (hierarchical cohorts), with testdata/departments.toml:
//   - a team borrows its department's surplus before another department's
//     lendable GPUs (arts' owner then gets its guarantee without preempting);
//   - a department's borrow caps its subtree (genomics stops at 16 although
//     its own borrow allows 20 and arts lends 8);
//   - the other department's owner reclaims across departments;
//   - a team without a department is unaffected (its guarantee at once, and
//     no borrowing).
func TestDepartments(t *testing.T) {
	begin(t)
	objs := render(t, testdata("departments.toml"))
	for _, name := range []string{"science", "arts"} {
		if parent, _, _ := unstructured.NestedString(find(t, objs, "Cohort", name).Object, "spec", "parentName"); parent != "gpu-pool" {
			t.Fatalf("Cohort %s: parentName %q, want gpu-pool", name, parent)
		}
	}
	// genomics submits 4-GPU Jobs one at a time, so each admission says
	// where its GPUs came from.
	genomicsJobs := func(t *testing.T, n int) []*batchv1.Job {
		t.Helper()
		q := localQueueFor(t, objs, "genomics")
		var jobs []*batchv1.Job
		for i := range n {
			j := submit(t, job{ns: "genomics", queue: q, name: fmt.Sprintf("g%d", i), pods: 1, gpus: 4})
			waitAdmitted(t, j)
			jobs = append(jobs, j)
		}
		return jobs
	}
	undisturbed := func(t *testing.T, jobs []*batchv1.Job) {
		t.Helper()
		for _, j := range jobs {
			if s := state(t, j); !s.admitted || s.evicted || s.preemptedReason != "" {
				t.Errorf("genomics Job %s was disturbed: %+v", j.Name, s)
			}
		}
	}

	t.Run("surplus-before-other-departments", func(t *testing.T) {
		useAgreement(t, "departments", objs)
		jobs := genomicsJobs(t, 3) // its 8 and science's surplus of 4
		waitUsage(t, "genomics", h100, gpu, usage{total: 12, borrowed: 4})
		// Had the 4 come from arts, music would have to reclaim them.
		music := submit(t, job{ns: "music", queue: localQueueFor(t, objs, "music"), name: "own", pods: 1, gpus: 8})
		waitAdmitted(t, music)
		waitUsage(t, "music", h100, gpu, usage{total: 8})
		undisturbed(t, jobs)
	})

	t.Run("department-borrow-caps-its-subtree", func(t *testing.T) {
		useAgreement(t, "departments", objs)
		// 8 own + 4 surplus + 4 from arts (science's borrow); physics' 4
		// are never lent.
		genomicsJobs(t, 4)
		over := submit(t, job{ns: "genomics", queue: localQueueFor(t, objs, "genomics"), name: "over", pods: 1, gpus: 4})
		t.Logf("pending: %s", waitPending(t, over))
		waitUsage(t, "genomics", h100, gpu, usage{total: 16, borrowed: 8})
		waitUsage(t, "music", h100, gpu, usage{})
	})

	t.Run("reclaim-across-departments", func(t *testing.T) {
		useAgreement(t, "departments", objs)
		jobs := genomicsJobs(t, 4) // 4 of them are arts'
		music := submit(t, job{ns: "music", queue: localQueueFor(t, objs, "music"), name: "owner", pods: 1, gpus: 8})
		waitAdmitted(t, music)
		waitFor(t, "one genomics Workload preempted for music", func(ctx context.Context) (bool, string) {
			var states []string
			preempted, admitted := 0, 0
			for _, j := range jobs {
				s := state(t, j)
				states = append(states, fmt.Sprintf("%s: %+v", j.Name, s))
				if s.preemptedReason != "" {
					preempted++
				} else if s.admitted {
					admitted++
				}
			}
			return preempted == 1 && admitted == len(jobs)-1, strings.Join(states, "; ")
		})
		waitUsage(t, "genomics", h100, gpu, usage{total: 12, borrowed: 4})
		waitUsage(t, "music", h100, gpu, usage{total: 8})
	})

	t.Run("team-without-department-unaffected", func(t *testing.T) {
		useAgreement(t, "departments", objs)
		jobs := genomicsJobs(t, 4)
		q := localQueueFor(t, objs, "platform")
		own := submit(t, job{ns: "platform", queue: q, name: "own", pods: 2, gpus: 4})
		waitAdmitted(t, own)
		over := submit(t, job{ns: "platform", queue: q, name: "over", pods: 1, gpus: 1})
		t.Logf("pending: %s", waitPending(t, over))
		waitUsage(t, "platform", h100, gpu, usage{total: 8})
		undisturbed(t, jobs)
		if s := state(t, own); s.preemptedReason != "" {
			t.Errorf("platform's Job was preempted: %+v", s)
		}
	})
}
