package binaries

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
)

// Monitoring lists the programs the monitoring suite (test/e2e/monitoring)
// runs: the Prometheus server and promtool, from one tools module. They are
// not in Components: the control-plane suite does not need them, and a cold
// Prometheus build takes minutes. They are built with remove_all_sd,
// Prometheus' own tag for a binary without the cloud service discoveries
// (AWS, Azure, GCE, Kubernetes, ... and their SDKs; file and HTTP discovery
// stay): the suite scrapes nothing, it loads series and evaluates rules,
// and those SDKs were most of a cold build (6 min 21 s in the last cold
// run, docs/e2e.md).
var Monitoring = []Component{
	{Name: "prometheus", ToolsDir: "prometheus", Module: "github.com/prometheus/prometheus", Package: "github.com/prometheus/prometheus/cmd/prometheus", Tags: "remove_all_sd"},
	{Name: "promtool", ToolsDir: "prometheus", Module: "github.com/prometheus/prometheus", Package: "github.com/prometheus/prometheus/cmd/promtool", Tags: "remove_all_sd"},
}

// EnsureComponents returns the binaries of comps, building those whose
// cached copy is missing or stale, as Ensure does for the control plane.
func EnsureComponents(ctx context.Context, toolsRoot, cacheDir string, comps []Component, log io.Writer) (*Set, error) {
	set := &Set{Paths: map[string]string{}, Versions: map[string]string{}}
	mods := map[string]moduleInfo{}
	for _, c := range comps {
		dir := filepath.Join(toolsRoot, c.ToolsDir)
		key := dir + "\x00" + c.Module
		info, ok := mods[key]
		if !ok {
			var err error
			if info, err = listModule(ctx, dir, c.Module); err != nil {
				return nil, err
			}
			mods[key] = info
		}
		path, built, err := ensureOne(ctx, c, dir, info.Version, cacheDir, log)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		set.Paths[c.Name] = path
		set.Versions[c.Name] = info.Version
		if built {
			set.Built = append(set.Built, c.Name)
		}
	}
	return set, nil
}
