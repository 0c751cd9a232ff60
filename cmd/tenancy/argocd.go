package main

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"

	"github.com/tenancy-dev/tenancy/argocd/params"
	"github.com/tenancy-dev/tenancy/generator"
)

// argocdAgreement is the file the plugin renders: the one Argo CD's discovery
// (argocd/plugin.yaml, discover.fileName) matched in the source path.
const argocdAgreement = "tenancy.toml"

// runArgoCD is the Config Management Plugin entry point. Argo CD runs
// "tenancy argocd generate" in the Application's source path, with the
// Application's parameters and plugin.env in the environment.
func runArgoCD(e *env, args []string) int {
	if len(args) == 0 {
		argocdUsage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		argocdUsage(e.stdout)
		return exitOK
	case "generate":
		return runArgoCDGenerate(e, args[1:])
	case "ignore-differences":
		return runArgoCDIgnoreDifferences(e, args[1:])
	}
	fmt.Fprintf(e.stderr, "tenancy argocd: unknown command %q\n\n", args[0])
	argocdUsage(e.stderr)
	return exitUsage
}

func argocdUsage(w io.Writer) {
	io.WriteString(w, `Usage:
  tenancy argocd generate
  tenancy argocd ignore-differences [--backend kueue|kai]

Commands:
  generate             render ./tenancy.toml for Argo CD (the plugin's generate command)
  ignore-differences   print the Application fields lending windows need

See docs/argocd.md for installing the plugin sidecar.
`)
}

func runArgoCDGenerate(e *env, args []string) int {
	fs := newFlagSet(e, "argocd generate", "argocd generate", `
Render ./tenancy.toml for Argo CD; argocd/plugin.yaml runs this as the plugin's
generate command, in the Application's source path. Only files inside that
directory are read: an absolute path, ../ or a symlink leaving it is refused.

The options come from the environment Argo CD sets, highest precedence first:
  1. the Application's plugin parameters backend, kueueAPI and cluster
     (ARGOCD_APP_PARAMETERS, or PARAM_BACKEND, PARAM_KUEUEAPI and
     PARAM_CLUSTER without it);
  2. its plugin.env entries TENANCY_BACKEND, TENANCY_KUEUE_API and
     TENANCY_CLUSTER (ARGOCD_ENV_TENANCY_BACKEND, ARGOCD_ENV_TENANCY_KUEUE_API,
     ARGOCD_ENV_TENANCY_CLUSTER);
  3. for the Kueue API, KUBE_API_VERSIONS: v1beta2 when the cluster serves
     kueue.x-k8s.io/v1beta2, v1beta1 when it serves only v1beta1;
  4. the backend the agreement's backend key names (the first, when it
     names both; kueue without the key), Kueue API v1beta2.
An invalid or unknown value is an error naming the variable it came from; a
backend the agreement's backend key does not name is refused at the key.
cluster chooses the part of a fleet agreement (one with [clusters]): the
manager's or a worker's; without it such an agreement is refused, naming its
parts, and an agreement without [clusters] refuses it.

Manifests go to stdout only when everything rendered; on any error the exit
status is non-zero, the message (with file:line) goes to stderr, which Argo CD
shows on the Application, and stdout stays empty.`)
	positional, code, ok := parseArgs(e, fs, args)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		fmt.Fprintf(e.stderr, "tenancy argocd generate: unexpected argument %q: the plugin renders ./%s\n", positional[0], argocdAgreement)
		return exitUsage
	}
	resolved, err := params.Resolve(e.environ())
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy argocd generate: %v\n", err)
		return exitUsage
	}
	opts, err := resolved.Options().Normalize()
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy argocd generate: %v\n", err)
		return exitUsage
	}
	src, err := generator.ReadFileIn(e.dir, argocdAgreement)
	if errors.Is(err, iofs.ErrNotExist) {
		// The Application names the plugin but its path has no agreement.
		fmt.Fprintf(e.stderr, "tenancy argocd generate: %s: no such file in the Application's source path\n", argocdAgreement)
		return exitFailure
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy argocd generate: %v\n", err)
		return exitFailure
	}
	res, err := generator.Render(src, opts)
	if err != nil {
		return reportError(e, err)
	}
	printDiagnostics(e, res.Warnings)
	// One line for the sidecar's log, so "why v1beta1?" has an answer there.
	fmt.Fprintf(e.stderr, "tenancy argocd generate: rendered %d objects from %s: %s\n", len(res.Objects), argocdAgreement, resolved.Rendered(res))
	if _, err := e.stdout.Write(res.Manifests); err != nil {
		fmt.Fprintf(e.stderr, "tenancy argocd generate: write output: %v\n", err)
		return exitFailure
	}
	return exitOK
}
