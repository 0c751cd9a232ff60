package generator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/load"
	"github.com/tenancy-dev/tenancy/generator/synthetic"
)

// benchTeams are the agreement sizes the issue asks about: the reference
// agreement's three teams up to ten thousand.
var benchTeams = []int{3, 100, 1000, 10000}

// benchAgreements caches the synthetic benchAgreements, so generating them is not
// timed and is done once per size.
var benchAgreements = map[int]generator.Source{}

func benchAgreement(tb testing.TB, teams int) generator.Source {
	tb.Helper()
	src, ok := benchAgreements[teams]
	if !ok {
		src = generator.Source{Path: "tenancy.toml", Data: synthetic.Agreement(teams)}
		if len(src.Data) > generator.MaxAgreementSize {
			tb.Fatalf("the synthetic agreement of %d teams is %d bytes, over the %d-byte cap", teams, len(src.Data), generator.MaxAgreementSize)
		}
		benchAgreements[teams] = src
	}
	return src
}

// reportPerTeam reports the cost of one team, the number that must stay flat as
// benchAgreements grow.
func reportPerTeam(b *testing.B, teams int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(teams), "ns/team")
}

// benchEachSize runs step once per iteration on the agreement of every
// size in benchTeams, reporting bytes, allocations and the cost per team,
// under the names docs/bench.md quotes (teams=N).
func benchEachSize(b *testing.B, step func(b *testing.B, src generator.Source)) {
	for _, teams := range benchTeams {
		b.Run(fmt.Sprintf("teams=%d", teams), func(b *testing.B) {
			src := benchAgreement(b, teams)
			b.SetBytes(int64(len(src.Data)))
			b.ReportAllocs()
			for b.Loop() {
				step(b, src)
			}
			reportPerTeam(b, teams)
		})
	}
}

// BenchmarkParse times reading TOML into the positioned tree.
func BenchmarkParse(b *testing.B) {
	benchEachSize(b, func(b *testing.B, src generator.Source) {
		if _, diags := load.Parse(src.Path, src.Data); len(diags) > 0 {
			b.Fatal(diags)
		}
	})
}

// BenchmarkValidate times Check, which is Render without the output (issue
// 28): parse, decode, validate, plan, the families' checks and renders, and
// the encoding, whose manifests it drops.
func BenchmarkValidate(b *testing.B) {
	benchEachSize(b, func(b *testing.B, src generator.Source) {
		if _, _, err := generator.Check(src, generator.Options{}); err != nil {
			b.Fatal(err)
		}
	})
}

// benchRenderings are the renderings users ask for.
var benchRenderings = []struct {
	name string
	opts generator.Options
}{
	{"kueue", generator.Options{Backend: generator.Kueue}},
	{"kueue-v1beta1", generator.Options{Backend: generator.Kueue, KueueAPI: generator.KueueV1beta1}},
	{"kai", generator.Options{Backend: generator.KAI}},
}

// BenchmarkRender times the whole library pipeline, from bytes to the YAML
// stream, for each backend.
func BenchmarkRender(b *testing.B) {
	for _, r := range benchRenderings {
		b.Run("backend="+r.name, func(b *testing.B) {
			benchEachSize(b, func(b *testing.B, src generator.Source) {
				if _, err := generator.Render(src, r.opts); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// TestRenderScalesLinearly fails when rendering grows faster than the number
// of teams: a quadratic step hides at a hundred teams and takes minutes at
// ten thousand. It compares the per-team cost of 10,000 teams with that of
// 1,000, allowing 3× for garbage collection of a larger heap and noise.
func TestRenderScalesLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("times renderings of 1,000 and 10,000 teams")
	}
	const small, large, allowed = 1000, 10000, 3.0
	for _, r := range benchRenderings {
		t.Run(r.name, func(t *testing.T) {
			costSmall := fastestPerTeam(t, small, r.opts)
			costLarge := fastestPerTeam(t, large, r.opts)
			ratio := float64(costLarge) / float64(costSmall)
			t.Logf("per team: %v at %d teams, %v at %d teams (%.2f×)", costSmall, small, costLarge, large, ratio)
			if ratio > allowed {
				t.Errorf("rendering %d teams costs %.1f× as much per team as %d teams (%v vs %v); want at most %.0f×",
					large, ratio, small, costLarge, costSmall, allowed)
			}
		})
	}
}

// fastestPerTeam renders an agreement of n teams a few times and returns the
// cost per team of the cheapest run, in CPU time: the run least disturbed by
// other processes sharing the machine.
func fastestPerTeam(t *testing.T, teams int, opts generator.Options) time.Duration {
	t.Helper()
	src := benchAgreement(t, teams)
	if _, err := generator.Render(src, opts); err != nil { // warm up
		t.Fatal(err)
	}
	runs := max(3, 10000/teams)
	fastest := time.Duration(1<<63 - 1)
	for range runs {
		start := cpuTime()
		if _, err := generator.Render(src, opts); err != nil {
			t.Fatal(err)
		}
		fastest = min(fastest, cpuTime()-start)
	}
	return fastest / time.Duration(teams)
}
