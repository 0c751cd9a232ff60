package kai

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The department checks of issue 20 in the real KAI, with
// testdata/kai-departments.toml: departments.toml (the Kueue proof is
// ../departments_test.go) with music allowed to borrow 8 and the queue
// admission policy off (see the file). 32 H100s; science (16: genomics 8, physics 4, a surplus of 4) borrows at
// most 4; arts (8: music 8); platform has no department. Rendered, science
// is a Queue of quota 16 and limit 20 and arts one of quota 8 and limit 16,
// both under gpu-pool-shared (quota and limit 24); platform is under
// gpu-pool-reserved. Every pod asks for one GPU and names no priority
// (the agreement has none), so KAI's podgrouper gives it the chart's
// preemptible "train".
var (
	departments = testdata("kai-departments.toml")
	genomics    = work{ns: "genomics", queue: "genomics"}
	physics     = work{ns: "physics", queue: "physics"}
	music       = work{ns: "music", queue: "music"}
	platform    = work{ns: "platform", queue: "platform"}
)

// waitQueueGPUs waits until KAI's Queue status says want GPUs allocated.
func waitQueueGPUs(t *testing.T, queue string, want float64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("queue %s to report %v GPUs allocated", queue, want), func(ctx context.Context) (bool, string) {
		got, err := queueAllocatedGPUs(ctx, queue)
		return err == nil && got == want, fmt.Sprintf("%v (%v)", got, err)
	})
}

// A team borrows its department's surplus before another department's
// GPUs: genomics at 12 (its 8 and science's 4) is within science's quota,
// so when every other team then takes its guarantee, the pool's 32 are
// exactly full and nothing of genomics is reclaimed.
func TestKAIDepartmentsSurplusBeforeOtherDepartments(t *testing.T) {
	begin(t)
	reset(t, departments)
	pods(t, genomics, "g", 12)
	reached(t, "genomics", "g", 12) // every pod: no settle can fail
	waitQueueGPUs(t, "science", 12)
	pods(t, music, "m", 8)
	pods(t, physics, "p", 4)
	pods(t, platform, "o", 8)
	reachedAll(t, bound{"music", "m", 8}, bound{"physics", "p", 4}, bound{"platform", "o", 8}, bound{"genomics", "g", 12})
	waitQueueGPUs(t, "arts", 8)
}

// A department's borrow caps its subtree: with physics running its 4,
// genomics stops at 16 (science's limit 20), although its own limit is 20
// and arts' 8 GPUs are idle.
func TestKAIDepartmentsBorrowCapsSubtree(t *testing.T) {
	begin(t)
	reset(t, departments)
	pods(t, physics, "p", 4)
	reached(t, "physics", "p", 4)
	pods(t, genomics, "g", 24)
	waitBoundAll(t, bound{"genomics", "g", 16}, bound{"physics", "p", 4})
	waitQueueGPUs(t, "science", 20)
}

// Another department's owner reclaims across departments: genomics alone
// reaches science's limit 20 (4 of them beyond science's guarantee, out of
// arts'); music then asks for its 8 and gets them, by KAI reclaiming the 4
// (gpu-pool-shared holds 24), and genomics is left at science's 16.
func TestKAIDepartmentsReclaimAcrossDepartments(t *testing.T) {
	begin(t)
	reset(t, departments)
	pods(t, genomics, "g", 24)
	reached(t, "genomics", "g", 20)
	pods(t, music, "m", 8)
	waitBoundAll(t, bound{"music", "m", 8}, bound{"genomics", "g", 16})
	waitQueueGPUs(t, "science", 16)
	waitQueueGPUs(t, "arts", 8)
}

// A team without a department is unaffected: with genomics borrowing to 20,
// platform gets its guarantee of 8 at once and borrows none of the 4 GPUs
// still idle; genomics keeps its 20.
func TestKAIDepartmentsTeamWithoutDepartmentUnaffected(t *testing.T) {
	begin(t)
	reset(t, departments)
	pods(t, genomics, "g", 24)
	reached(t, "genomics", "g", 20)
	pods(t, platform, "o", 12)
	waitBoundAll(t, bound{"platform", "o", 8}, bound{"genomics", "g", 20})
}

// A department's lendable is not held: science may lend at most 4 of its
// idle GPUs, so music (which may borrow 8)
// should stop at 12. KAI has no lending limit: the render warns, and music
// takes 8 of science's idle 16, reaching arts' limit 16. This pins what KAI
// does, so a change in KAI or the render shows.
func TestKAIDepartmentsLendableNotHeld(t *testing.T) {
	begin(t)
	_, stderr, err := renderRaw(departments)
	if err != nil || !strings.Contains(stderr, "KAI has no lending limit") {
		t.Fatalf("the render does not warn that science's lendable is not kept: %v\n%s", err, stderr)
	}
	reset(t, departments)
	pods(t, music, "m", 24)
	waitBound(t, "music", "m", 16)
	waitQueueGPUs(t, "arts", 16)
	waitQueueGPUs(t, "science", 0)
}
