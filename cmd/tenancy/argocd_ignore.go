package main

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/gpu"
)

// ignoreDifference is one entry of an Argo CD Application's
// spec.ignoreDifferences (Argo CD's ResourceIgnoreDifferences), the fields
// tenancy writes of it.
type ignoreDifference struct {
	Group                 string   `json:"group"`
	Kind                  string   `json:"kind"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers"`
}

// applicationFields is the part of an Application's spec the lending
// windows need.
type applicationFields struct {
	Spec struct {
		IgnoreDifferences []ignoreDifference `json:"ignoreDifferences"`
		SyncPolicy        struct {
			SyncOptions []string `json:"syncOptions"`
		} `json:"syncPolicy"`
	} `json:"spec"`
}

// windowsApplicationFields are the Application fields that keep Argo CD
// from undoing the windows controller, for the given backends: per
// backend, its queues' group and kind from its descriptor, ignored where
// the controller's field manager owns them, and RespectIgnoreDifferences so
// a sync keeps those fields' live values.
func windowsApplicationFields(backends []gpu.Backend) applicationFields {
	var a applicationFields
	for _, b := range backends {
		d := gpu.Describe(b)
		a.Spec.IgnoreDifferences = append(a.Spec.IgnoreDifferences, ignoreDifference{
			Group: d.QueueGroup, Kind: d.QueueKind, ManagedFieldsManagers: []string{generator.WindowFieldManager},
		})
	}
	a.Spec.SyncPolicy.SyncOptions = []string{"RespectIgnoreDifferences=true"}
	return a
}

func runArgoCDIgnoreDifferences(e *env, args []string) int {
	fs := newFlagSet(e, "argocd ignore-differences", "argocd ignore-differences [--backend kueue|kai]", `
Print the fields an Argo CD Application needs when its agreement has
lending windows, as YAML to merge into the Application: ignoreDifferences on
the queues for the fields the windows controller owns (its field manager
tenancy-windows), and the sync option RespectIgnoreDifferences=true, so
neither a refresh nor a sync puts the values outside a window back while
one is open. Both backends by default, so the Application may switch its
backend parameter; the entries change nothing for agreements without
windows. See docs/argocd.md, "Lending windows".

Examples:
  tenancy argocd ignore-differences
  tenancy argocd ignore-differences --backend kai`)
	backend := fs.String("backend", "", "the backend whose queues to name: kueue or kai (default: both)")
	positional, code, ok := parseArgs(e, fs, args)
	if !ok {
		return code
	}
	if !noArguments(e, "argocd ignore-differences", positional, "") {
		return exitUsage
	}
	backends := gpu.Backends
	if *backend != "" {
		if !slices.Contains(gpu.Backends, gpu.Backend(*backend)) {
			fmt.Fprintf(e.stderr, "tenancy argocd ignore-differences: --backend %q: want kueue or kai\n", *backend)
			return exitUsage
		}
		backends = []gpu.Backend{gpu.Backend(*backend)}
	}
	out, err := yaml.Marshal(windowsApplicationFields(backends))
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy argocd ignore-differences: %v\n", err)
		return exitFailure
	}
	var head strings.Builder
	head.WriteString("# Lending windows: Argo CD keeps what the windows controller applies.\n")
	for _, b := range backends {
		d := gpu.Describe(b)
		fmt.Fprintf(&head, "# %s: %s owns %s of each %s.\n", b, generator.WindowFieldManager, strings.Join(d.WindowOwnedPaths(), ", "), d.QueueKind)
	}
	fmt.Fprint(e.stdout, head.String(), string(out))
	return exitOK
}
