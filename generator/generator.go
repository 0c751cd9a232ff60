// Package generator renders a tenancy agreement (tenancy.toml) into scheduler
// manifests. It is the one library the CLI, the KRM function, the Argo CD
// plugin and the diff command wrap; none of them re-implements a step.
//
// The pipeline: load (bytes with key positions; go-toml judges validity) →
// decode (typed values with positions and set/unset/invalid states, defaults
// applied once) → validate (the agreement's own rules) → plan (with the
// origin of every value) → the backend's families (render.Family, the same
// contract for all: Check, located diagnostics from the plan's origins;
// Render, objects) → encode (sorted, canonical, byte-stable). Check is
// Render without the output: it runs every step Render runs and drops the
// manifests.
package generator

import (
	"errors"
	"fmt"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// Backend names the scheduler the manifests are for (gpu.Backend).
type Backend = gpu.Backend

const (
	// Kueue renders kueue.x-k8s.io objects.
	Kueue = gpu.Kueue
	// KAI renders NVIDIA KAI Scheduler scheduling.run.ai/v2 Queues.
	KAI = gpu.KAI
)

// Backends lists every backend, in the order tenancy check reports them.
var Backends = gpu.Backends

// Kueue API versions accepted by Options.KueueAPI.
const (
	KueueV1beta2 = "v1beta2" // storage version since Kueue 0.16; the default
	KueueV1beta1 = "v1beta1" // for Kueue 0.15 and older
)

// ErrOptions is wrapped by errors about Options, so wrappers can tell a usage
// error (exit 2) from a bad agreement (exit 1).
var ErrOptions = errors.New("invalid options")

// Options choose the backend and its API version.
type Options struct {
	// Backend overrides the agreement's backend key. Empty: the first
	// backend the key names, or Kueue when the agreement has no key (see
	// Resolve). A backend the key does not name is refused at the key.
	Backend Backend
	// BackendFrom says where Backend came from, as the user would find it
	// ("--backend", "spec.backend", "ARGOCD_ENV_TENANCY_BACKEND"), for the
	// message refusing a backend the agreement does not name.
	BackendFrom string
	KueueAPI    string // empty means v1beta2; ignored for KAI
	// Cluster chooses the part of a fleet agreement (one with [clusters])
	// to render: the manager's name (default "manager") or a worker
	// cluster's. An agreement with clusters refuses an empty Cluster, naming
	// its parts (Parts), so a wrapper that forgot the parameter fails
	// loudly instead of rendering the wrong cluster; an agreement without
	// clusters refuses a non-empty one.
	Cluster string
	// ClusterFrom says where Cluster came from ("--cluster",
	// "spec.cluster", "ARGOCD_ENV_TENANCY_CLUSTER"), for messages.
	ClusterFrom string
}

// Normalize fills defaults and rejects unknown values with an error wrapping
// ErrOptions. An empty Backend stays empty: the agreement decides it.
func (o Options) Normalize() (Options, error) {
	if o.KueueAPI == "" {
		o.KueueAPI = KueueV1beta2
	}
	switch o.Backend {
	case "", Kueue, KAI:
	default:
		return o, fmt.Errorf("%w: backend %q: must be kueue or kai", ErrOptions, o.Backend)
	}
	switch o.KueueAPI {
	case KueueV1beta2, KueueV1beta1:
	default:
		return o, fmt.Errorf("%w: kueue API %q: must be v1beta2 or v1beta1", ErrOptions, o.KueueAPI)
	}
	return o, nil
}

// Parts returns the names Options.Cluster accepts for an agreement: nil for
// an agreement without [clusters] (render it without a cluster), else the
// manager's part first, then each worker cluster by name. A wrapper that
// renders every part (diff, the PR comment, report) iterates over them.
// An agreement that does not load or decode is an *AgreementError.
func Parts(src Source) ([]string, error) {
	return prepare(src).parts()
}

// Prepared is an agreement read, decoded, validated and planned once, for
// a wrapper that lists its parts and renders several of them, or renders
// it for several backends (diff): each Render runs only the steps that
// depend on its options, and says exactly what Render(src, opts) says.
type Prepared struct{ pr *prepared }

// Prepare reads an agreement once for Parts and Render. It never fails:
// what is wrong with the agreement is each call's error.
func Prepare(src Source) *Prepared { return &Prepared{pr: prepare(src)} }

// Parts is the package's Parts of the prepared agreement.
func (p *Prepared) Parts() ([]string, error) { return p.pr.parts() }

// Render is the package's Render of the prepared agreement.
func (p *Prepared) Render(opts Options) (*Result, error) { return p.pr.render(opts) }

// RenderFields is Render without writing the YAML, for a wrapper that
// compares objects by their fields and shows the YAML of a few (diff): it
// runs every step Render runs, the YAML checked as Check checks it
// (encode.Check refuses what writing refuses), so it fails exactly where
// Render fails, with the same diagnostics. The Result's Objects have no
// YAML and its Manifests are nil; encode.YAML writes an object's YAML as
// Render would have.
func (p *Prepared) RenderFields(opts Options) (*Result, error) {
	return p.pr.result(opts, checkYAML)
}

// Diagnostic is one problem in an agreement, with its position and field path.
type Diagnostic = diag.Diagnostic

// AgreementError is returned when an agreement is invalid; it lists every problem.
type AgreementError = diag.AgreementError

// Object is one rendered Kubernetes object: its fields and its canonical
// YAML. It is the one object type of the pipeline, render.Object.
type Object = render.Object

// Result is a complete rendering. It is built whole before anything is
// written, so a failure never leaves partial output behind.
type Result struct {
	Plan      *plan.Agreement
	Backend   Backend      // the backend rendered for: Options.Resolve's
	Objects   []Object     // in output order
	Manifests []byte       // the YAML stream: Objects joined by "---\n"
	Warnings  []Diagnostic // e.g. what KAI cannot express exactly
}

// Render parses, validates and renders an agreement. A Result is never
// empty: an agreement that would render nothing is an error, since empty
// output can make Argo CD prune a cluster's queues. On any error the Result
// is nil: an invalid agreement is an *AgreementError listing every problem
// (warnings included); bad options wrap ErrOptions.
func Render(src Source, opts Options) (*Result, error) {
	return renderSource(src, opts)
}

// Check is Render without the output: it runs every step Render runs for
// opts' backend (the agreement's own rules, each of the backend's families'
// checks and renders, the stream's order and YAML) and keeps the plan and
// the warnings, so an agreement Check accepts renders, and one it refuses
// fails Render with the same diagnostics: two objects of one identity and
// an agreement that renders nothing included. It returns the plan and the
// warnings, or an *AgreementError; bad options wrap ErrOptions.
func Check(src Source, opts Options) (*plan.Agreement, []Diagnostic, error) {
	return check(src, opts)
}

// CheckAll is Check for every backend tenancy check covers (Options.Backends):
// the one opts asks for, else each one the agreement's backend key names,
// else Kueue, which render renders by default. What the agreement itself
// says, the same for every backend, is reported once; what one backend says
// alone starts with its name ("kai: ..."). It returns the plan and the
// warnings of an agreement every one of them accepts, or an *AgreementError
// holding every diagnostic.
func CheckAll(src Source, opts Options) (*plan.Agreement, []Diagnostic, error) {
	return checkAll(src, opts)
}
