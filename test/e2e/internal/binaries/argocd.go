package binaries

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
)

// ArgoCD is Argo CD's one binary: argocd-application-controller,
// argocd-repo-server and argocd-cmp-server are all cmd/main.go of
// github.com/argoproj/argo-cd, which picks the command by the name it runs
// under (argv[0], or $ARGOCD_BINARY_NAME). It is kept out of Components so
// that the control-plane suite does not build it; the Argo CD loop asks for
// it with EnsureComponent.
var ArgoCD = Component{
	Name:     "argocd",
	ToolsDir: "argocd",
	Module:   "github.com/argoproj/argo-cd/v3",
	Package:  "github.com/argoproj/argo-cd/v3/cmd",
}

// ArgoCDV2 is the same binary from Argo CD v2.14 (module .../argo-cd/v2),
// for the loop's run against the older major.
var ArgoCDV2 = Component{
	Name:     "argocd",
	ToolsDir: "argocd-v2",
	Module:   "github.com/argoproj/argo-cd/v2",
	Package:  "github.com/argoproj/argo-cd/v2/cmd",
}

// Built is one component's binary.
type Built struct {
	// Path is the executable.
	Path string
	// Version is the module version it was built from.
	Version string
	// ModuleDir is the module cache directory of the component's module
	// (Argo CD's holds manifests/crds).
	ModuleDir string
	// Fresh says it had to be built in this call.
	Fresh bool
}

// EnsureComponent returns c's binary, building it when the cached copy is
// missing or stale, as Ensure does for the control plane.
func EnsureComponent(ctx context.Context, toolsRoot, cacheDir string, c Component, log io.Writer) (*Built, error) {
	dir := filepath.Join(toolsRoot, c.ToolsDir)
	info, err := listModule(ctx, dir, c.Module)
	if err != nil {
		return nil, err
	}
	path, fresh, err := ensureOne(ctx, c, dir, info.Version, cacheDir, log)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	return &Built{Path: path, Version: info.Version, ModuleDir: info.Dir, Fresh: fresh}, nil
}
