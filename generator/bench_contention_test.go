package generator_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/contention"
	"github.com/tenancy-dev/tenancy/generator/diff"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// contentionAgreements are the agreements the issue times explain
// --contention on: examples/large (300 teams, two flavors: on KAI a node
// pool each) and the synthetic 10,000 teams.
func contentionAgreements(b *testing.B) []struct {
	name     string
	src      generator.Source
	backends []generator.Backend
} {
	large, err := os.ReadFile(filepath.Join("..", "examples", "large", "tenancy.toml"))
	if err != nil {
		b.Fatal(err)
	}
	return []struct {
		name     string
		src      generator.Source
		backends []generator.Backend
	}{
		{"large", generator.Source{Path: "tenancy.toml", Data: large}, []generator.Backend{generator.Kueue, generator.KAI}},
		{"teams=10000", benchAgreement(b, 10000), []generator.Backend{generator.Kueue, generator.KAI}},
	}
}

// busyHalf names every other team of p: a busy set as large as it gets.
func busyHalf(p *plan.Agreement) []string {
	var out []string
	for i := 0; i < len(p.Teams); i += 2 {
		out = append(out, p.Teams[i].Name)
	}
	return out
}

// BenchmarkContention times what explain --contention --busy does: check the
// agreement (check=yes, what the command runs first) and compute alone, all
// busy and a busy set of half the teams; check=no times the computation
// alone, on the checked plan.
func BenchmarkContention(b *testing.B) {
	for _, a := range contentionAgreements(b) {
		for _, backend := range a.backends {
			opts := generator.Options{Backend: backend}
			p, _, err := generator.CheckAll(a.src, opts)
			if err != nil {
				b.Fatal(err)
			}
			q := contention.Query{Busy: busyHalf(p)}
			b.Run(a.name+"/backend="+string(backend)+"/check=yes", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p, _, err := generator.CheckAll(a.src, opts)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := generator.Contention(p, opts, q); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(a.name+"/backend="+string(backend)+"/check=no", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := generator.Contention(p, opts, q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDiffContention times diff.Compare on two renderings of each
// agreement as tenancy diff renders them (Prepared.RenderFields), the new
// one with the first team's guarantee lowered by one (rendering both sides
// is BenchmarkDiff's): the comparison of every object, and the contention
// section, which computes both sides' alone and all-busy outcomes.
func BenchmarkDiffContention(b *testing.B) {
	for _, a := range contentionAgreements(b) {
		opts := generator.Options{Backend: generator.Kueue}
		old, err := generator.Prepare(a.src).RenderFields(opts)
		if err != nil {
			b.Fatal(err)
		}
		new, err := generator.Prepare(changedGuarantee(b, a.src)).RenderFields(opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(a.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := diff.Compare(diff.Side{Label: "old", Result: old}, diff.Side{Label: "new", Result: new})
				if err != nil {
					b.Fatal(err)
				}
				if len(r.Summary.Contention) == 0 {
					b.Fatal("no contention change: the change did not land")
				}
			}
		})
	}
}

// changedGuarantee is src with the first team's guarantee of 8 lowered to
// 7: the change make bench's diff reviews.
func changedGuarantee(b *testing.B, src generator.Source) generator.Source {
	changed := bytes.Replace(src.Data, []byte("guaranteed = 8\n"), []byte("guaranteed = 7\n"), 1)
	if bytes.Equal(changed, src.Data) {
		b.Fatal("no guaranteed = 8 to change")
	}
	return generator.Source{Path: src.Path, Data: changed}
}

// BenchmarkDiff times what tenancy diff does with a change to one team's
// guarantee, in-process: read, check and render both sides side by side
// (Prepared.RenderFields, as the command does), compare them and write the
// text. Its ns/op is the command's wall-clock time less the process's
// start-up, on as many cores as the benchmark has.
func BenchmarkDiff(b *testing.B) {
	for _, a := range contentionAgreements(b) {
		opts := generator.Options{Backend: generator.Kueue}
		new := changedGuarantee(b, a.src)
		b.Run(a.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var sides [2]*generator.Result
				var errs [2]error
				var wg sync.WaitGroup
				for i, src := range []generator.Source{a.src, new} {
					wg.Go(func() { sides[i], errs[i] = generator.Prepare(src).RenderFields(opts) })
				}
				wg.Wait()
				if err := errors.Join(errs[:]...); err != nil {
					b.Fatal(err)
				}
				r, err := diff.Compare(diff.Side{Label: "old", Result: sides[0]}, diff.Side{Label: "new", Result: sides[1]})
				if err != nil {
					b.Fatal(err)
				}
				if len(diff.Text(r, false)) == 0 || r.Counts.Changed == 0 {
					b.Fatal("no change: the change did not land")
				}
			}
		})
	}
}
