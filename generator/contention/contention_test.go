package contention_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/contention"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/internal/sourcetest"
	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

// row is one team's numbers in a flavor, in the order the tables read.
type row struct {
	guaranteed int64
	alone, all string
	busy       string // "" without a busy set
	note       string
}

func rows(r *contention.Report, flavor string) map[string]row {
	out := map[string]row{}
	for _, f := range r.Flavors {
		if f.Flavor != flavor {
			continue
		}
		for _, o := range f.Teams {
			x := row{guaranteed: o.Guaranteed, alone: o.Alone.String(), all: o.AllBusy.String(), note: o.Note}
			if o.Busy != nil {
				x.busy = o.Busy.String()
			}
			out[o.Team] = x
		}
	}
	return out
}

func readFile(t *testing.T, path ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// weighted is three teams of 8 H100s each of 24, each lending all 8 and
// borrowing up to 8; b weighs 3.
const weighted = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 24
[teams.a]
guaranteed = 8
lendable = 8
borrow = 8
[teams.b]
guaranteed = 8
lendable = 8
borrow = 8
weight = 3
[teams.c]
guaranteed = 8
lendable = 8
borrow = 8
`

// tie is two equal borrowers and one spare GPU: a's and b's over-quota
// shares are half a GPU each.
const tie = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 17
[teams.a]
guaranteed = 8
lendable = 8
borrow = 8
[teams.b]
guaranteed = 8
lendable = 8
borrow = 8
[teams.c]
guaranteed = 1
lendable = 1
`

func TestCompute(t *testing.T) {
	reference := readFile(t, "tenancy.toml")
	departments := readFile(t, "examples", "departments", "tenancy.toml")
	cases := map[string]struct {
		src     string
		backend gpu.Backend
		busy    []string
		at      string
		nodes   map[string]int64 // Query.Nodes
		flavor  string
		want    map[string]row
	}{
		// One node of the reference agreement's four lost (24 GPUs):
		// Kueue admits the same 32 when all are busy, and 8 of them wait
		// for a node, any team's; alone each team fits. With training and
		// inference busy, 32 are admitted again, 8 waiting.
		"kueue: the reference agreement on 24 GPUs": {
			src: reference, backend: gpu.Kueue, busy: []string{"training", "inference"}, flavor: "h100",
			nodes: map[string]int64{"h100": 24},
			want: map[string]row{
				"training":  {16, "24", "8-16", "16-24", ""},
				"research":  {8, "16", "0-8", "0", ""},
				"inference": {8, "8", "0-8", "0-8", ""},
			},
		},
		// KAI gives every busy queue its deserved quota whatever the
		// GPUs: all busy, the fair shares hold 32 of 24, and 8 wait,
		// any team's. Alone, or research alone busy, each fits.
		"kai: the reference agreement on 24 GPUs": {
			src: reference, backend: gpu.KAI, busy: []string{"research"}, flavor: "h100",
			nodes: map[string]int64{"h100": 24},
			want: map[string]row{
				"training":  {16, "24", "8-16", "0", ""},
				"research":  {8, "16", "0-8", "16", ""},
				"inference": {8, "8", "0-8", "0", ""},
			},
		},
		// Half the nodes: training's alone is the 16 there are.
		"kai: the reference agreement on 16 GPUs": {
			src: reference, backend: gpu.KAI, flavor: "h100",
			nodes: map[string]int64{"h100": 16},
			want: map[string]row{
				"training":  {16, "16", "0-16", "", ""},
				"research":  {8, "16", "0-8", "", ""},
				"inference": {8, "8", "0-8", "", ""},
			},
		},
		// A cut of a flavor the agreement does not name changes nothing.
		"kueue: nodes of another flavor": {
			src: reference, backend: gpu.Kueue, flavor: "h100", nodes: map[string]int64{"a100": 0},
			want: map[string]row{
				"training":  {16, "24", "16", "", ""},
				"research":  {8, "16", "8", "", ""},
				"inference": {8, "8", "8", "", ""},
			},
		},
		// training 16 (lends 8, borrows 8), research 8 (lends 8, borrows
		// 8), inference 8 (never lent). Alone, training takes research's
		// 8 (24), research training's lent 8 (16); inference never
		// borrows. All busy, nobody lends: the guarantees. With inference
		// busy too, training still takes research's idle 8.
		"kueue: the reference agreement": {
			src: reference, backend: gpu.Kueue, busy: []string{"training", "inference"}, flavor: "h100",
			want: map[string]row{
				"training":  {16, "24", "16", "24", ""},
				"research":  {8, "16", "8", "0", ""},
				"inference": {8, "8", "8", "8", ""},
			},
		},
		// KAI: POOL-shared (training, research; quota 24, limit 32-8=24)
		// and POOL-reserved (inference, 8/8). Alone: the least limit on
		// the path, training min(24, 24) = 24, research min(16, 24) =
		// 16. All busy: the deserved quotas fill the 32.
		"kai: the reference agreement": {
			src: reference, backend: gpu.KAI, busy: []string{"research"}, flavor: "h100",
			want: map[string]row{
				"training":  {16, "24", "16", "0", ""},
				"research":  {8, "16", "8", "16", ""},
				"inference": {8, "8", "8", "0", ""},
			},
		},
		// b and c busy, a idle: a's 8 are left to borrow, both may take
		// all 8. Kueue without fair sharing: first come, each 8 to 16.
		"kueue: two borrowers, first come": {
			src: weighted, backend: gpu.Kueue, busy: []string{"b", "c"}, flavor: "h100",
			want: map[string]row{
				"a": {8, "16", "8", "0", ""},
				"b": {8, "16", "8", "8-16", ""},
				"c": {8, "16", "8", "8-16", ""},
			},
		},
		// KAI: deserved 8 + 8, the 8 left by weight 3 : 1 (normalized
		// 0.75 and 0.25 of 8): b 8+6 = 14, c 8+2 = 10, as
		// TestKAIWeightsShareSurplus measures.
		"kai: two borrowers by weight": {
			src: weighted, backend: gpu.KAI, busy: []string{"b", "c"}, flavor: "h100",
			want: map[string]row{
				"a": {8, "16", "8", "0", ""},
				"b": {8, "16", "8", "14", ""},
				"c": {8, "16", "8", "10", ""},
			},
		},
		// One spare GPU (c's, idle) for a and b at weight 1: each share
		// is 0.5, rounded down to 0; the fractions tie, and KAI gives the
		// GPU to the older queue: 8 or 9 each.
		"kai: a tie is a range": {
			src: tie, backend: gpu.KAI, busy: []string{"a", "b"}, flavor: "h100",
			want: map[string]row{
				"a": {8, "16", "8", "8-9", ""},
				"b": {8, "16", "8", "8-9", ""},
				"c": {1, "1", "1", "0", ""},
			},
		},
		// Kueue's tree: science's Cohort holds its surplus 8 and its
		// teams' lent 8 + 4 (subtree 20), keeps 20-8 = 12 local and puts
		// 8 in the pool; product puts 8 (search's lent 8) in it; platform
		// 4: the pool's Cohort holds 20.
		// genomics alone: 12 local (surplus 8, physics' 4) and the
		// pool's, to its borrow 16: 32. physics alone: to its borrow 8:
		// 24. search alone: its borrow 8 from the pool (20 - its own 8
		// there = 12): 16. ads: borrow 4: 12. platform: 4: 12.
		// All busy: the teams' lent parts fill science's 12 local GPUs;
		// only science's 8 in the pool are left, and every borrower may
		// reach them: first come, each from its guarantee to its
		// guarantee + min(borrow, 8).
		// genomics and platform busy: genomics takes the 4 local and 12
		// from the pool (16 left there after platform's lent 4): 32;
		// platform's 4 fit beside it: 12.
		"kueue: departments": {
			src: departments, backend: gpu.Kueue, busy: []string{"genomics", "platform"}, flavor: "h100",
			want: map[string]row{
				"genomics": {16, "32", "16-24", "32", ""},
				"physics":  {16, "24", "16-24", "0", ""},
				"search":   {8, "16", "8-16", "0", ""},
				"ads":      {8, "12", "8-12", "0", ""},
				"platform": {8, "12", "8-12", "12", ""},
			},
		},
		// KAI: POOL-shared (quota 64, limit 64) holds platform (8/12),
		// science (40/48, weight 2) and product (16/28). All busy: the
		// deserved 64 fill the pool; science's 40 go 16 + 16 to its
		// teams and its surplus 8 by weight 1 : 1, 4 each (20, 20);
		// product's 16 go 8 + 8. Alone: the least limit on the path:
		// genomics min(32, 48) = 32, physics 24, search 16, ads 12,
		// platform 12. science busy: its two teams as when all are busy
		// but nobody else asks: science gets its limit 48 (40 + 8 of the
		// pool's 24 idle), 16 + 16 + 16 left by weight: 8 each (24, 24).
		"kai: departments": {
			src: departments, backend: gpu.KAI, busy: []string{"science"}, flavor: "h100",
			want: map[string]row{
				"genomics": {16, "32", "20", "24", ""},
				"physics":  {16, "24", "20", "24", ""},
				"search":   {8, "16", "8", "0", ""},
				"ads":      {8, "12", "8", "0", ""},
				"platform": {8, "12", "8", "0", ""},
			},
		},
		// Numbers the real KAI gave in make e2e (docs/kai.md): genomics
		// alone 20 (TestKAIDepartmentsReclaimAcrossDepartments' first
		// step); with music busy, KAI reclaims 4 and genomics keeps 16,
		// music its 8 (its last); all busy, genomics 12 (its 8 and
		// science's surplus 4), music 8, physics 4, platform 8
		// (TestKAIDepartmentsSurplusBeforeOtherDepartments).
		"kai: kai-departments as measured": {
			src: readFile(t, "test", "e2e", "testdata", "kai-departments.toml"), backend: gpu.KAI, busy: []string{"genomics", "music"}, flavor: "h100",
			want: map[string]row{
				"genomics": {8, "20", "12", "16", ""},
				"music":    {8, "16", "8", "8", ""},
				"physics":  {4, "4", "4", "0", ""},
				"platform": {8, "8", "8", "0", ""},
			},
		},
		// TestKAIWeightsShareSurplus: b (weight 3) 14, c 10.
		"kai: kai-weights as measured": {
			src: readFile(t, "test", "e2e", "testdata", "kai-weights.toml"), backend: gpu.KAI, busy: []string{"b", "c"}, flavor: "h100",
			want: map[string]row{
				"a": {8, "16", "8", "0", ""},
				"b": {8, "16", "8", "14", ""},
				"c": {8, "16", "8", "10", ""},
			},
		},
		// research lends all its 8 and reclaims with "wait" (Kueue's
		// reclaimWithinCohort Never): with training busy too, training
		// may have borrowed them first, and keeps them while its Jobs
		// run. The e2e check TestContentionReclaimWait measured both
		// ends: 8 and 16 when the floods arrive together, 0 and 24 when
		// training's comes first.
		"kueue: reclaim wait, as measured": {
			src: readFile(t, "test", "e2e", "testdata", "reclaim-wait.toml"), backend: gpu.Kueue, busy: []string{"training", "research"}, flavor: "h100",
			want: map[string]row{
				"training":  {16, "24", "16-24", "16-24", ""},
				"research":  {8, "16", "0-8", "0-8", ""},
				"inference": {8, "8", "8", "0", ""},
			},
		},
		// platform (in the pool, lends 4 of its 8) reclaims with "wait":
		// all busy, its 4 join science's 8 in the pool's Cohort as first
		// come, so platform is sure of 4 only and may take 8 (its 4 back
		// and its borrow 4): 4-12; genomics may reach 12 of the 12
		// (science's borrow 8 lets them in): 16-28. Alone, nobody holds
		// what platform lent: 12 as with reclaim.
		"kueue: reclaim wait in the pool beside departments": {
			src: departments + "reclaim = \"wait\"\n", backend: gpu.Kueue, flavor: "h100",
			want: map[string]row{
				"genomics": {16, "32", "16-28", "", ""},
				"physics":  {16, "24", "16-24", "", ""},
				"search":   {8, "16", "8-16", "", ""},
				"ads":      {8, "12", "8-12", "", ""},
				"platform": {8, "12", "4-12", "", ""},
			},
		},
		// physics (science, lends 4 of its 16) reclaims with "wait": all
		// busy, its 4 stay in science's Cohort beside the surplus, first
		// come: physics is sure of 12 and may reach 24 (its 4 back and its
		// borrow 8 of the 12 science can reach); genomics may take those 4
		// too: 16-28.
		"kueue: reclaim wait inside a department": {
			src: strings.Replace(departments, "[teams.physics]\n", "[teams.physics]\nreclaim = \"wait\"\n", 1), backend: gpu.Kueue, flavor: "h100",
			want: map[string]row{
				"genomics": {16, "32", "16-28", "", ""},
				"physics":  {16, "24", "12-24", "", ""},
				"search":   {8, "16", "8-16", "", ""},
				"ads":      {8, "12", "8-12", "", ""},
				"platform": {8, "12", "8-12", "", ""},
			},
		},
		// The windows issue's agreement on a Monday afternoon: inference
		// lends nothing, research alone runs its 8.
		"kueue: outside the window": {
			src: windowstest.Agreement, backend: gpu.Kueue, at: "2026-12-07T15:00:00+01:00", flavor: "h100",
			want: map[string]row{
				"inference": {8, "8", "8", "", ""},
				"research":  {8, "8", "8", "", ""},
			},
		},
		// Monday 21:00 Berlin: inference lends 6, research alone borrows
		// them: 14; all busy, nobody lends.
		"kueue: inside the window": {
			src: windowstest.Agreement, backend: gpu.Kueue, at: "2026-12-07T21:00:00+01:00", flavor: "h100",
			want: map[string]row{
				"inference": {8, "8", "8", "", ""},
				"research":  {8, "14", "8", "", ""},
			},
		},
		// KAI applies no window's lendable: inference never lends outside
		// its window, so it sits in POOL-reserved, and POOL-shared's limit
		// 16-8 = 8 holds research at 8 even at night.
		"kai: inside the window": {
			src: windowstest.Agreement, backend: gpu.KAI, at: "2026-12-07T21:00:00+01:00", flavor: "h100",
			want: map[string]row{
				"inference": {8, "8", "8", "", ""},
				"research":  {8, "8", "8", "", ""},
			},
		},
		// A retiring team's ClusterQueue admits nothing; its lendable is
		// still lent: research alone takes training's 8.
		"kueue: retiring": {
			src: reference + "retiring = true\n", backend: gpu.Kueue, flavor: "h100",
			want: map[string]row{
				"training":  {16, "24", "16", "", ""},
				"research":  {8, "16", "8", "", ""},
				"inference": {8, "0", "0", "", "retiring: its ClusterQueue admits nothing"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := contention.Query{Busy: tc.busy, Nodes: tc.nodes}
			if tc.at != "" {
				q.At = windowstest.At(t, tc.at)
			}
			r, err := contention.Compute(sourcetest.Plan(t, tc.src), tc.backend, q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rows(r, tc.flavor), cmp.AllowUnexported(row{})); diff != "" {
				t.Errorf("(-want,+got)\n%s", diff)
			}
		})
	}
}

func TestComputeRefusesUnknownBusy(t *testing.T) {
	_, err := contention.Compute(sourcetest.Plan(t, weighted), gpu.Kueue, contention.Query{Busy: []string{"a", "nobody"}})
	if !errors.Is(err, contention.ErrUnknownTeam) {
		t.Fatalf("err = %v, want ErrUnknownTeam", err)
	}
}

func TestReportSaysInstantAndBusy(t *testing.T) {
	at := time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC)
	r, err := contention.Compute(sourcetest.Plan(t, readFile(t, "examples", "departments", "tenancy.toml")), gpu.Kueue,
		contention.Query{At: at, Busy: []string{"product", "platform"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ads", "platform", "search"}, r.Busy); diff != "" {
		t.Errorf("busy (-want,+got)\n%s", diff)
	}
	if r.At == nil || !r.At.Equal(at) {
		t.Errorf("at = %v, want %v", r.At, at)
	}
}
