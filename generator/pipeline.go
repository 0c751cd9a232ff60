package generator

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/encode"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/load"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
	"github.com/tenancy-dev/tenancy/generator/render/guard"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
	"github.com/tenancy-dev/tenancy/generator/render/kueue"
	"github.com/tenancy-dev/tenancy/generator/render/monitor"
	"github.com/tenancy-dev/tenancy/generator/render/multikueue"
	"github.com/tenancy-dev/tenancy/generator/render/namespaces"
	"github.com/tenancy-dev/tenancy/generator/render/windowctl"
	"github.com/tenancy-dev/tenancy/generator/validate"
)

// defaultName names an agreement that came without a path (the KRM
// function's inline spec.agreement) in every diagnostic.
const defaultName = "tenancy.toml"

// families are what one backend renders, each family with the same
// contract on the plan (render.Family): the scheduler's objects, the team
// Namespaces (with the backend's queue label), the guardrails for that
// scheduler, and the monitoring rules and dashboard (which render nothing
// unless [monitoring] enables them). Render runs every family's Check, then
// every family's Render; Check runs the same and drops the output. A later
// family (departments) is one more entry.
func families(opts Options) []render.Family {
	switch opts.Backend {
	case KAI:
		return []render.Family{kai.Renderer{}, namespacesFamily(gpu.KAI), guard.Renderer{Backend: gpu.KAI}, monitor.Renderer{Backend: gpu.KAI}, windowctl.Renderer{Backend: gpu.KAI}}
	default:
		return []render.Family{kueue.Renderer{APIVersion: opts.KueueAPI}, namespacesFamily(gpu.Kueue), guard.Renderer{Backend: gpu.Kueue}, monitor.Renderer{Backend: gpu.Kueue}, windowctl.Renderer{Backend: gpu.Kueue, KueueAPI: opts.KueueAPI}, multikueue.Family{APIVersion: opts.KueueAPI}}
	}
}

// namespacesFamily renders the team Namespaces with the backend's queue
// label when its descriptor says the Namespaces carry it.
func namespacesFamily(b Backend) namespaces.Family {
	if d := gpu.Describe(b); d.NamespaceQueueLabel {
		return namespaces.Family{QueueLabel: d.QueueLabel}
	}
	return namespaces.Family{}
}

// check is render without the output: the whole rendering (build), with
// the plan and the warnings kept and the rest dropped, so whatever render
// refuses, check refuses, with the same diagnostics. The YAML is checked
// (encode.Check), not written: Write's refusals are Check's.
func check(src Source, opts Options) (*plan.Agreement, []Diagnostic, error) {
	res, err := prepare(src).result(opts, checkYAML)
	if err != nil {
		return nil, nil, err
	}
	return res.Plan, res.Warnings, nil
}

// checkAll checks the backend opts or the agreement names first, then each
// other backend the agreement names (when opts names none), each by a whole
// build, and merges what they say. On a fleet without opts.Cluster it does
// so for every part (Parts), the manager for Kueue only (KAI has no
// multi-cluster dispatch), and returns the whole agreement's plan.
func checkAll(src Source, opts Options) (*plan.Agreement, []Diagnostic, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, nil, err
	}
	// The agreement is read and planned once; each part and backend runs
	// only the steps that depend on the options.
	pr := prepare(src)
	clusters, fleet := []string{opts.Cluster}, false
	if opts.Cluster == "" {
		if names, err := pr.parts(); err == nil && len(names) > 0 {
			clusters, fleet = names, true
		}
	}
	var all diag.List
	seen := map[string]bool{}
	add := func(diags diag.List) {
		for _, d := range diags {
			if k := diagKey(d); !seen[k] {
				seen[k] = true
				all = append(all, d)
			}
		}
	}
	var whole *plan.Agreement
	for i, cluster := range clusters {
		o := opts
		o.Cluster = cluster
		b := pr.build(o, checkYAML)
		if b.err != nil && !(fleet && errors.Is(b.err, errKAIManager)) {
			return nil, nil, b.err
		}
		add(b.diags)
		if i == 0 {
			whole = b.plan
			if fleet && b.whole != nil {
				whole = b.whole
			}
		}
		if b.plan == nil {
			break
		}
		for _, backend := range opts.Backends(b.plan) {
			if backend == b.opts.Backend || (backend == KAI && b.plan.IsManager()) {
				continue
			}
			o.Backend = backend
			other := pr.build(o, checkYAML)
			if other.err != nil {
				return nil, nil, other.err
			}
			add(other.diags)
		}
	}
	all.Sort()
	if len(all.Errors()) > 0 {
		return nil, nil, &AgreementError{Diagnostics: all}
	}
	return whole, all.Warnings(), nil
}

// diagKey tells two diagnostics apart: the same problem said by two
// backends is one.
func diagKey(d Diagnostic) string {
	return string(d.Severity) + "\x00" + string(d.Type) + "\x00" + d.String()
}

// prepared is an agreement read once: loaded, its includes merged,
// decoded, validated and planned, with what those steps said. Every step
// after it depends on the options (the backend, the part of a fleet), so a
// check of every backend and part, or a diff rendering each part, shares
// one prepared agreement instead of reading the file once per rendering
// (at 10,000 teams each read costs about a third of a second).
type prepared struct {
	src  Source
	name string
	// p is the agreement's plan; nil when the file did not load or its
	// includes did not resolve, and then diags says why.
	p       *plan.Agreement
	decoded bool
	// diags are the agreement's own diagnostics: what load, include,
	// decode, validation and the fleet's checks said. Each build copies
	// them before adding its own.
	diags diag.List
	// decodeDiags is what decoding alone said, which parts reports.
	decodeDiags diag.List
	// judged waits for go-toml's verdict on the bytes (load.Start); nil
	// when the loader refused them itself.
	judged func() diag.List
}

// verdict is go-toml's refusal of the agreement's bytes, nil when it
// accepts them (or the loader refused them first, which diags says). A
// refusal replaces whatever the steps after loading said, as if they had
// not run: the loader's tree of a document that is not TOML is no
// agreement.
func (pr *prepared) verdict() diag.List {
	if pr.judged == nil {
		return nil
	}
	return pr.judged()
}

// prepare reads, decodes, validates and plans an agreement (prepared).
func prepare(src Source) *prepared {
	name := src.Path
	if name == "" {
		name = defaultName
	}
	pr := &prepared{src: src, name: name}
	if len(src.Data) > MaxAgreementSize {
		pr.diags = diag.List{{Severity: diag.Error, Type: field.ErrorTypeTooLong, File: name,
			Message: fmt.Sprintf("file is %d bytes; agreements are limited to %d bytes (1 MiB)", len(src.Data), MaxAgreementSize)}}
		return pr
	}
	// go-toml's verdict on the bytes comes later (load.Start): the steps
	// below and the renderings run on the loader's tree meanwhile, and
	// every answer waits for the verdict (verdict).
	root, diags, judged := load.Start(name, src.Data)
	pr.judged = judged
	if len(diags.Errors()) > 0 {
		pr.diags = diags
		return pr
	}
	includes, diags := resolveIncludes(src, name, root)
	if len(diags.Errors()) > 0 {
		diags.Sort()
		pr.diags = diags
		return pr
	}
	a, diags := agreement.Decode(name, root)
	pr.decodeDiags = slices.Clip(diags)
	pr.decoded = len(diags.Errors()) == 0
	// Semantic checks run even after type errors, so one run reports
	// everything; a field that failed to decode is simply Invalid.
	diags = append(slices.Clone(diags), validate.Validate(a)...)
	p := plan.Build(a)
	p.Source = src.Data
	p.Includes = includes
	pr.p = p
	pr.diags = append(diags, checkFleet(p)...)
	return pr
}

// parts lists the agreement's fleet parts (Parts): what fails to load or
// decode is an *AgreementError.
func (pr *prepared) parts() ([]string, error) {
	refused := pr.verdict()
	switch {
	case refused != nil:
		return nil, &AgreementError{Diagnostics: refused}
	case pr.p == nil:
		return nil, &AgreementError{Diagnostics: pr.diags}
	case len(pr.decodeDiags.Errors()) > 0:
		return nil, &AgreementError{Diagnostics: pr.decodeDiags}
	}
	return pr.p.Parts(), nil
}

// check resolves the backend (opts' or the agreement's, checkBackendKey),
// chooses the part of a fleet opts.Cluster names (choosePart), and runs
// that backend's families' checks on the part's plan. The families' checks
// run even when the agreement's own rules found errors, and even when the
// backend asked for is refused, so one run reports everything. It returns
// the part's plan (the agreement's, without a fleet; nil when the file did
// not load), the whole agreement's plan, the options resolved against it,
// every diagnostic, sorted, and an error wrapping ErrOptions when
// opts.Cluster names no part of the agreement.
func (pr *prepared) check(opts Options) (part, whole *plan.Agreement, _ Options, _ diag.List, _ error) {
	p := pr.p
	if p == nil {
		return nil, nil, opts, slices.Clone(pr.diags), nil
	}
	diags := append(slices.Clone(pr.diags), checkBackendKey(p, opts)...)
	opts = resolve(p, opts)
	part, err := choosePart(p, opts)
	switch {
	case err != nil && pr.decoded:
		diags.Sort()
		return nil, p, opts, diags, err
	case err != nil:
		// Which parts there are is unknown until the file decodes
		// (Parts says so too): report what does not, on the whole plan.
		part = p
	}
	for _, f := range families(opts) {
		diags = append(diags, f.Check(part)...)
	}
	diags.Sort()
	return part, p, opts, diags, nil
}

// renderSource renders an agreement for opts. Each step runs once; check
// runs the same and drops the output.
func renderSource(src Source, opts Options) (*Result, error) {
	return prepare(src).render(opts)
}

// render is renderSource on a prepared agreement.
func (pr *prepared) render(opts Options) (*Result, error) {
	return pr.result(opts, writeYAML)
}

// yamlStep says what the last step of a build does with the objects'
// YAML: render writes it; check only checks that it could
// (encode.Check), which refuses what writing refuses.
type yamlStep bool

const (
	writeYAML yamlStep = true
	checkYAML yamlStep = false
)

// result is render, or check's rendering without the YAML (checkYAML):
// a Result whose objects have no YAML and no stream.
func (pr *prepared) result(opts Options, yaml yamlStep) (*Result, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	b := pr.build(opts, yaml)
	if b.err != nil {
		return nil, b.err
	}
	if len(b.diags.Errors()) > 0 {
		return nil, &AgreementError{Diagnostics: b.diags}
	}
	return b.result, nil
}

// built is what build says of an agreement: the plan of the part rendered
// (nil when the file did not load) and the whole agreement's, the options
// resolved against it, every diagnostic (sorted), the result when nothing
// was an error, and err when the options name no part of the agreement.
type built struct {
	plan   *plan.Agreement
	whole  *plan.Agreement
	opts   Options
	diags  diag.List
	result *Result
	err    error
}

// build renders an agreement: the checks (prepared.check), then the
// resolved backend's families (renderPlan). What any step refuses is in
// diags with every warning, so check (which runs build too) and render give
// one verdict.
func (pr *prepared) build(opts Options, yaml yamlStep) (b built) {
	in := opts
	defer func() {
		// The loader's tree of bytes go-toml refuses is any tree a
		// valid document could give, so the steps after loading handle
		// it; should one fail all the same, the verdict is still the
		// answer (and a panic of any other agreement stays a panic).
		if refused := pr.verdict(); refused != nil {
			_ = recover()
			b = built{opts: in, diags: refused}
		}
	}()
	p, whole, opts, diags, err := pr.check(opts)
	b = built{plan: p, whole: whole, opts: opts, diags: diags, err: err}
	if err != nil || len(diags.Errors()) > 0 {
		return b
	}
	b.result, b.diags = renderPlan(p, families(opts), diags.Warnings(), yaml)
	if b.result != nil {
		b.result.Backend = opts.Backend
	}
	return b
}

// renderPlan runs the families' Render on a checked plan, orders the
// stream, finds two objects of one identity, and writes the YAML (or, with
// checkYAML, checks it). It returns the result and the warnings, or nil and
// every problem with the warnings, the renderer's own failures included.
func renderPlan(p *plan.Agreement, fams []render.Family, warnings diag.List, yaml yamlStep) (*Result, diag.List) {
	var objs []render.Object
	var errs diag.List
	for _, r := range renderFamilies(p, fams) {
		warnings = append(warnings, r.diags.Warnings()...)
		errs = append(errs, r.diags.Errors()...)
		objs = append(objs, r.objs...)
	}
	if len(errs) == 0 && len(objs) == 0 {
		// Empty output would let Argo CD prune every queue it manages.
		errs = diag.List{{Severity: diag.Error, Type: field.ErrorTypeRequired, File: p.File, Message: "the agreement renders no objects"}}
	}
	var res *Result
	if len(errs) == 0 {
		ordered, dups := encode.Order(objs)
		errs = duplicates(p, dups)
		if len(errs) == 0 {
			// Write refuses exactly what Check refuses (encode's tests hold
			// the two to one verdict), so a rendering that writes does not
			// check first: at 10,000 teams that was a tenth of a second.
			var (
				encoded = ordered
				stream  []byte
				err     error
			)
			if yaml == writeYAML {
				encoded, stream, err = encode.Write(ordered)
			} else {
				err = encode.Check(ordered)
			}
			if err != nil {
				errs = diag.List{{Severity: diag.Error, Type: field.ErrorTypeInternal, File: p.File, Message: "encode: " + err.Error()}}
			}
			res = &Result{Plan: p, Objects: encoded, Manifests: stream}
		}
	}
	warnings.Sort()
	if len(errs) > 0 {
		all := append(errs, warnings...)
		all.Sort()
		return nil, all
	}
	res.Warnings = warnings
	return res, warnings
}

// rendered is what one family's Render gave.
type rendered struct {
	objs  []render.Object
	diags diag.List
	panic any
}

// renderFamilies runs every family's Render on p, each on its own
// goroutine, and returns what each gave in the families' order: the
// families read the plan and build their own objects, so on two cores the
// Kueue objects and the guardrails (about half a second together at
// 10,000 teams) render side by side. A family's panic is the caller's.
func renderFamilies(p *plan.Agreement, fams []render.Family) []rendered {
	out := make([]rendered, len(fams))
	var wg sync.WaitGroup
	for i, f := range fams {
		wg.Go(func() {
			defer func() { out[i].panic = recover() }()
			out[i].objs, out[i].diags = f.Render(p)
		})
	}
	wg.Wait()
	for _, r := range out {
		if r.panic != nil {
			panic(r.panic)
		}
	}
	return out
}

// duplicates reports each pair of rendered objects that share an identity.
// Validation and the families' checks refuse every agreement known to
// render such a pair, at the key that causes it (a team namespace that is
// the windows controller's, a team named like the default LocalQueue), so
// this is the backstop that keeps check's verdict render's for any they
// miss. It points at the team the second object belongs to (its team
// label), else at the pool's name, which every object carries.
func duplicates(p *plan.Agreement, dups []encode.Duplicate) diag.List {
	if len(dups) == 0 {
		return nil
	}
	r := &diag.Reporter{File: p.File}
	for _, d := range dups {
		o := p.NameOrigin
		for _, obj := range []render.Object{d.Second, d.First} {
			if t := teamOf(p, obj); t != nil {
				o = t.Origin
				break
			}
		}
		r.Errorf(field.ErrorTypeDuplicate, o.Pos, o.Path, "the agreement renders two objects that are both %s: the API server holds one object per name, so one would overwrite the other", d.Identity())
	}
	return r.List
}

// teamOf returns the team an object is labelled with, or nil.
func teamOf(p *plan.Agreement, o render.Object) *plan.Team {
	meta, _ := o.Fields["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	name, _ := labels[render.TeamLabel].(string)
	if name == "" {
		return nil
	}
	for i := range p.Teams {
		if p.Teams[i].Name == name {
			return &p.Teams[i]
		}
	}
	return nil
}
