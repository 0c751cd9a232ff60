package generator

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// errKAIManager is wrapped by the refusal to render a fleet's manager for
// KAI, which checkAll skips (the manager is checked for Kueue).
var errKAIManager = errors.New("KAI has no multi-cluster dispatch")

// choosePart returns the plan of the part opts.Cluster names (plan.Part),
// or p itself for an agreement without a fleet and no cluster asked for.
// Anything else is a usage error wrapping ErrOptions, naming the parts: a
// wrapper that forgot its cluster parameter must fail loudly, not render
// one cluster's objects into another, and exit as for any other bad option.
func choosePart(p *plan.Agreement, opts Options) (*plan.Agreement, error) {
	from := opts.ClusterFrom
	if from == "" {
		from = "the cluster option"
	}
	names := p.Parts()
	switch {
	case p.Fleet == nil && opts.Cluster == "":
		return p, nil
	case p.Fleet == nil:
		return nil, fmt.Errorf("%w: %s asks for cluster %q, but %s has no [clusters]: render it without a cluster", ErrOptions, from, opts.Cluster, p.File)
	case opts.Cluster == "":
		return nil, fmt.Errorf("%w: %s is a fleet of clusters: say which part to render with %s (one of %s)", ErrOptions, p.File, clusterFlag(opts), strings.Join(names, ", "))
	}
	part := p.Part(opts.Cluster)
	if part == nil {
		return nil, fmt.Errorf("%w: %s asks for cluster %q, which %s does not have: its parts are %s", ErrOptions, from, opts.Cluster, p.File, strings.Join(names, ", "))
	}
	if part.IsManager() && opts.Backend == KAI {
		return nil, fmt.Errorf("%w: %w: the manager %q dispatches jobs with Kueue's MultiKueue, so it renders for Kueue only; render the workers (%s) for KAI, each a standalone queue tree", ErrOptions, errKAIManager, opts.Cluster, strings.Join(names[1:], ", "))
	}
	return part, nil
}

// clusterFlag is how the message about a missing cluster names the option.
func clusterFlag(opts Options) string {
	if opts.ClusterFrom != "" {
		return opts.ClusterFrom
	}
	return "the cluster option"
}

// resolve is Options.Resolve, but a fleet's manager is Kueue's whenever
// the agreement names Kueue at all: it is the one backend a manager has.
func resolve(p *plan.Agreement, opts Options) Options {
	if opts.Backend == "" && p.Fleet != nil && opts.Cluster == p.Fleet.Manager && slices.Contains(opts.Backends(p), Kueue) {
		opts.Backend = Kueue
	}
	return opts.Resolve(p)
}

// checkFleet reports, at the backend key, a fleet whose agreement is not
// written for Kueue (its manager needs MultiKueue), and the split's own
// problems (plan.CheckFleet).
func checkFleet(p *plan.Agreement) diag.List {
	if p.Fleet == nil {
		return nil
	}
	list := plan.CheckFleet(p)
	if key := p.Backend; key != nil && !slices.Contains((Options{}).Backends(p), Kueue) {
		r := diag.Reporter{File: p.File}
		r.Errorf(field.ErrorTypeNotSupported, key.Origin.Pos, key.Origin.Path, "an agreement with [clusters] needs kueue: its manager dispatches jobs with Kueue's MultiKueue (KAI has no multi-cluster dispatch); the workers may run either")
		r.Suggest(`backend = ["kueue", "kai"]`)
		list = append(list, r.List...)
	}
	return list
}
