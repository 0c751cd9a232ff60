package generator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

// windowAgreement is the issue's, with inference also allowed to borrow 2
// during its window.
const windowAgreement = windowstest.Head + windowstest.WeekdayNights + "borrow = 2\n" + windowstest.Research

// gpuLimits digs the GPU resource's limits out of a Kueue patch.
func gpuLimits(t *testing.T, patch map[string]any) (lending, borrowing any) {
	t.Helper()
	rg := patch["spec"].(map[string]any)["resourceGroups"].([]any)
	for _, g := range rg {
		for _, f := range g.(map[string]any)["flavors"].([]any) {
			for _, r := range f.(map[string]any)["resources"].([]any) {
				r := r.(map[string]any)
				if r["name"] == "nvidia.com/gpu" {
					return r["lendingLimit"], r["borrowingLimit"]
				}
			}
		}
	}
	t.Fatalf("no GPU resource in %v", patch)
	return nil, nil
}

// TestWindows: the controller's patches come from the agreement and the
// instant alone: outside the window they equal the rendered ClusterQueue's
// fields, inside they carry the window's limits; only the team with a
// window is patched.
func TestWindows(t *testing.T) {
	src := generator.Source{Path: "tenancy.toml", Data: []byte(windowAgreement)}
	p, _, err := generator.Check(src, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	cases := map[string]struct {
		at                 time.Time
		lending, borrowing string
	}{
		"Monday noon, outside":    {time.Date(2026, 12, 7, 12, 0, 0, 0, berlin), "0", "0"},
		"Monday 21:00, inside":    {time.Date(2026, 12, 7, 21, 0, 0, 0, berlin), "6", "2"},
		"Saturday 03:00, inside":  {time.Date(2026, 12, 12, 3, 0, 0, 0, berlin), "6", "2"},
		"Saturday 21:00, outside": {time.Date(2026, 12, 12, 21, 0, 0, 0, berlin), "0", "0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, opts := range []generator.Options{{}, {KueueAPI: generator.KueueV1beta1}} {
				ws, err := generator.Windows(p, tc.at, opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(ws.Applies) != 1 || ws.Applies[0].Team != "inference" {
					t.Fatalf("applies %v, want inference only", ws.Applies)
				}
				l, b := gpuLimits(t, ws.Applies[0].Patch)
				if l != tc.lending || b != tc.borrowing {
					t.Errorf("%s: lendingLimit %v borrowingLimit %v, want %s %s", opts.KueueAPI, l, b, tc.lending, tc.borrowing)
				}
			}
		})
	}
	// Outside every window the patch is what render writes.
	res, err := generator.Render(src, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := generator.Windows(p, time.Date(2026, 12, 7, 12, 0, 0, 0, berlin), generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Objects {
		if o.Kind() == "ClusterQueue" && o.Name() == "inference" {
			want := o.Fields["spec"].(map[string]any)["resourceGroups"]
			if diff := cmp.Diff(want, ws.Applies[0].Patch["spec"].(map[string]any)["resourceGroups"]); diff != "" {
				t.Errorf("outside every window the patch differs from the render (-render,+patch):\n%s", diff)
			}
		}
	}
}

// TestWindowsKAI: KAI's owned field is the team Queue's GPU limit.
func TestWindowsKAI(t *testing.T) {
	src := generator.Source{Path: "tenancy.toml", Data: []byte(windowAgreement)}
	p, _, err := generator.Check(src, generator.Options{Backend: generator.KAI})
	if err != nil {
		t.Fatal(err)
	}
	for at, want := range map[time.Time]any{
		time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC): float64(8),
		time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC): float64(10),
	} {
		ws, err := generator.Windows(p, at, generator.Options{Backend: generator.KAI})
		if err != nil {
			t.Fatal(err)
		}
		got := ws.Applies[0].Patch["spec"].(map[string]any)["resources"].(map[string]any)["gpu"].(map[string]any)["limit"]
		if cmp.Diff(want, got) != "" && cmp.Diff(int64(want.(float64)), got) != "" {
			t.Errorf("at %s limit %v (%T), want %v", at, got, got, want)
		}
	}
}

// TestWindowsKAIPools: with a node pool per flavor, a team's window
// patches each of its pool Queues, each with the limit of that flavor.
func TestWindowsKAIPools(t *testing.T) {
	const agreement = `version = 1
name = "gpu-pool"
backend = "kai"
[flavors.h100]
capacity = 16
[flavors.a100]
capacity = 8
[teams.inference.flavors.h100]
guaranteed = 8
[teams.inference.flavors.a100]
guaranteed = 4
lendable = 4
[[teams.inference.windows]]
from = "20:00"
to = "06:00"
flavors = { h100 = { borrow = 2 }, a100 = { borrow = 1 } }
[teams.research.flavors.h100]
guaranteed = 8
lendable = 8
`
	src := generator.Source{Path: "tenancy.toml", Data: []byte(agreement)}
	p, _, err := generator.Check(src, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	limits := func(at time.Time) map[string]any {
		ws, err := generator.Windows(p, at, generator.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		for _, a := range ws.Applies {
			name := a.Patch["metadata"].(map[string]any)["name"]
			if a.Team != "inference" || name != a.Queue {
				t.Errorf("apply %+v: want inference's queue, named in its patch", a)
			}
			out[a.Queue] = fmt.Sprint(a.Patch["spec"].(map[string]any)["resources"].(map[string]any)["gpu"].(map[string]any)["limit"])
		}
		return out
	}
	// Never lending its H100s, inference's H100 queue is reserved (limit =
	// quota) whatever the window says; its A100 queue takes the borrow.
	outside := map[string]any{"inference-a100": "4", "inference-h100": "8"}
	inside := map[string]any{"inference-a100": "5", "inference-h100": "8"}
	if diff := cmp.Diff(outside, limits(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))); diff != "" {
		t.Errorf("outside the window (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(inside, limits(time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC))); diff != "" {
		t.Errorf("inside the window (-want,+got):\n%s", diff)
	}
}

// TestWindowBorrowInGPUQuota: where the GPU ResourceQuota caps a team's
// requests (queue admission off: with it on, the queue is the cap and the
// quota holds only zeroes), it cannot change by the hour, so it allows the
// window's larger borrow.
func TestWindowBorrowInGPUQuota(t *testing.T) {
	src := windowAgreement + "[guardrails]\nqueue_admission = false\n"
	res, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range res.Objects {
		if o.Kind() != "ResourceQuota" || o.Namespace() != "inference" {
			continue
		}
		hard, _ := o.Fields["spec"].(map[string]any)["hard"].(map[string]any)
		if v, ok := hard["requests.nvidia.com/gpu"]; ok {
			found = true
			if v != "10" {
				t.Errorf("inference's GPU quota %v, want 10 (8 guaranteed + the window's borrow 2)", v)
			}
		}
	}
	if !found {
		t.Error("no GPU ResourceQuota for inference")
	}
}
