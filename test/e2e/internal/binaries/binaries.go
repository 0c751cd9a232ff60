// Package binaries builds the control-plane programs the end-to-end suite
// runs (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, Kueue,
// KWOK) from the Go module proxy, and keeps them in a cache directory keyed
// by version so that a rerun reuses them.
//
// Each component has its own tools module under test/e2e/tools: the versions
// live in those go.mod files and nowhere else. A binary is reused when the
// stamp file beside it names the same Go toolchain, the same go.sum content
// and the same build flags; otherwise it is rebuilt.
package binaries

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Component is one program to build: which tools module holds it, which
// module versions it, and which package is its main.
type Component struct {
	// Name is the binary's file name, e.g. "kube-apiserver".
	Name string
	// ToolsDir is the tools module directory, relative to test/e2e/tools.
	ToolsDir string
	// Module is the module whose version keys the cache, e.g. "k8s.io/kubernetes".
	Module string
	// Package is the main package to build.
	Package string
	// StampVersion adds Kubernetes' -X version flags for this module version:
	// an unstamped kube binary reports v0.0.0, which clients refuse.
	StampVersion bool
	// Tags are the build tags, e.g. Prometheus' remove_all_sd.
	Tags string
}

// Components lists everything the control plane needs.
var Components = []Component{
	{Name: "etcd", ToolsDir: "etcd", Module: "go.etcd.io/etcd/server/v3", Package: "go.etcd.io/etcd/server/v3"},
	{Name: "kube-apiserver", ToolsDir: "kubernetes", Module: "k8s.io/kubernetes", Package: "k8s.io/kubernetes/cmd/kube-apiserver", StampVersion: true},
	{Name: "kube-controller-manager", ToolsDir: "kubernetes", Module: "k8s.io/kubernetes", Package: "k8s.io/kubernetes/cmd/kube-controller-manager", StampVersion: true},
	{Name: "kube-scheduler", ToolsDir: "kubernetes", Module: "k8s.io/kubernetes", Package: "k8s.io/kubernetes/cmd/kube-scheduler", StampVersion: true},
	{Name: "kueue", ToolsDir: "kueue", Module: "sigs.k8s.io/kueue", Package: "sigs.k8s.io/kueue/cmd/kueue"},
	{Name: "kwok", ToolsDir: "kwok", Module: "sigs.k8s.io/kwok", Package: "sigs.k8s.io/kwok/cmd/kwok"},
}

// Set holds the paths of the built binaries and the source directories the
// suite reads manifests from.
type Set struct {
	// Paths maps a component name to its executable.
	Paths map[string]string
	// Versions maps a component name to the module version it was built from.
	Versions map[string]string
	// KueueDir is the module cache directory of sigs.k8s.io/kueue, which
	// holds config/components (CRDs and webhook configurations).
	KueueDir string
	// KwokDir is the module cache directory of sigs.k8s.io/kwok, which holds
	// the default node and pod Stages under kustomize/stage.
	KwokDir string
	// Built lists the components that had to be built in this call.
	Built []string
}

// DefaultCacheDir returns $TENANCY_E2E_CACHE, else $TENANCY_CACHE/e2e (the
// Makefile's cache for third-party binaries), else <user cache>/tenancy/e2e,
// which is where the Makefile's default puts it too.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv("TENANCY_E2E_CACHE"); d != "" {
		return d, nil
	}
	if d := os.Getenv("TENANCY_CACHE"); d != "" {
		return filepath.Join(d, "e2e"), nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find cache directory: %w", err)
	}
	return filepath.Join(base, "tenancy", "e2e"), nil
}

// Ensure returns every component's binary, building those whose cached copy
// is missing or stale. toolsRoot is the test/e2e/tools directory; progress
// lines go to log.
func Ensure(ctx context.Context, toolsRoot, cacheDir string, log io.Writer) (*Set, error) {
	set := &Set{Paths: map[string]string{}, Versions: map[string]string{}}
	mods := map[string]moduleInfo{}
	for _, c := range Components {
		dir := filepath.Join(toolsRoot, c.ToolsDir)
		key := dir + "\x00" + c.Module
		info, ok := mods[key]
		if !ok {
			var err error
			info, err = listModule(ctx, dir, c.Module)
			if err != nil {
				return nil, err
			}
			mods[key] = info
		}
		switch c.Module {
		case "sigs.k8s.io/kueue":
			set.KueueDir = info.Dir
		case "sigs.k8s.io/kwok":
			set.KwokDir = info.Dir
		}
		path, built, err := ensureOne(ctx, c, dir, info.Version, cacheDir, log)
		if err != nil {
			return nil, err
		}
		set.Paths[c.Name] = path
		set.Versions[c.Name] = info.Version
		if built {
			set.Built = append(set.Built, c.Name)
		}
	}
	if set.KueueDir == "" {
		return nil, errors.New("no tools module provides sigs.k8s.io/kueue")
	}
	return set, nil
}

// KueueIn is the Kueue of another tools module, for the version matrix:
// each Kueue version has a tools module of its own, since one go.mod pins
// one version, and the cache keys binaries by version, so they do not
// collide. Build it with EnsureComponent.
func KueueIn(toolsDir string) Component {
	return Component{Name: "kueue", ToolsDir: toolsDir, Module: "sigs.k8s.io/kueue", Package: "sigs.k8s.io/kueue/cmd/kueue"}
}

type moduleInfo struct {
	Version string
	Dir     string
}

// listModule asks the go command for a module's version and directory in a
// tools module, downloading it when needed.
func listModule(ctx context.Context, dir, module string) (moduleInfo, error) {
	// The module must be in the cache for .Dir to be set.
	if out, err := goCmd(ctx, dir, "mod", "download", module); err != nil {
		return moduleInfo{}, fmt.Errorf("go mod download %s in %s: %w\n%s", module, dir, err, out)
	}
	out, err := goCmd(ctx, dir, "list", "-m", "-json", module)
	if err != nil {
		return moduleInfo{}, fmt.Errorf("go list -m %s in %s: %w\n%s", module, dir, err, out)
	}
	var m struct {
		Version string
		Dir     string
		Replace *struct {
			Version string
			Dir     string
		}
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return moduleInfo{}, fmt.Errorf("decode go list -m %s: %w", module, err)
	}
	info := moduleInfo{Version: m.Version, Dir: m.Dir}
	if m.Replace != nil {
		info = moduleInfo{Version: m.Replace.Version, Dir: m.Replace.Dir}
	}
	if info.Version == "" || info.Dir == "" {
		return moduleInfo{}, fmt.Errorf("go list -m %s in %s: no version or directory", module, dir)
	}
	return info, nil
}

// ldflags returns the linker flags for a component at a version.
func ldflags(c Component, version string) string {
	flags := []string{"-s", "-w"}
	if c.StampVersion {
		major, minor := "", ""
		parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
		if len(parts) >= 2 {
			major, minor = parts[0], parts[1]
		}
		flags = append(flags,
			"-X", "k8s.io/component-base/version.gitVersion="+version,
			"-X", "k8s.io/component-base/version.gitMajor="+major,
			"-X", "k8s.io/component-base/version.gitMinor="+minor,
			"-X", "k8s.io/component-base/version.gitTreeState=clean",
		)
	}
	return strings.Join(flags, " ")
}

// ensureOne returns the cached binary for c, building it first when its stamp
// does not match.
func ensureOne(ctx context.Context, c Component, dir, version, cacheDir string, log io.Writer) (string, bool, error) {
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		return "", false, fmt.Errorf("read %s go.sum: %w", c.Name, err)
	}
	h := sha256.Sum256(sum)
	flags := ldflags(c, version)
	stamp := fmt.Sprintf("module %s@%s\npackage %s\ngo %s %s/%s\ngo.sum %s\nldflags %s\n",
		c.Module, version, c.Package, runtime.Version(), runtime.GOOS, runtime.GOARCH, hex.EncodeToString(h[:8]), flags)
	if c.Tags != "" {
		// Only then, so that the binaries built without tags keep their
		// cached copies.
		stamp += "tags " + c.Tags + "\n"
	}

	outDir := filepath.Join(cacheDir, c.Name+"-"+version)
	bin := filepath.Join(outDir, c.Name)
	stampPath := filepath.Join(outDir, "stamp")
	if have, err := os.ReadFile(stampPath); err == nil && bytes.Equal(have, []byte(stamp)) {
		if _, err := os.Stat(bin); err == nil {
			return bin, false, nil
		}
	}

	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", false, fmt.Errorf("create %s: %w", outDir, err)
	}
	fmt.Fprintf(log, "building %s %s (cold builds take minutes; later runs reuse %s)\n", c.Name, version, outDir)
	start := time.Now()
	tmp := fmt.Sprintf("%s.tmp-%d", bin, os.Getpid())
	out, err := goCmd(ctx, dir, "build", "-trimpath", "-tags", c.Tags, "-ldflags", flags, "-o", tmp, c.Package)
	if err != nil {
		os.Remove(tmp)
		return "", false, fmt.Errorf("build %s: %w\n%s", c.Name, err, out)
	}
	// Rename is atomic, so a concurrent run sees either the old or the new binary.
	if err := os.Rename(tmp, bin); err != nil {
		return "", false, fmt.Errorf("install %s: %w", c.Name, err)
	}
	if err := os.WriteFile(stampPath, []byte(stamp), 0o644); err != nil {
		return "", false, fmt.Errorf("write stamp for %s: %w", c.Name, err)
	}
	fmt.Fprintf(log, "built %s in %s\n", c.Name, time.Since(start).Round(time.Second))
	return bin, true, nil
}

// goCmd runs the go command of the running toolchain in dir. It never lets
// the go command fetch another toolchain.
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, goBinary(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off")
	return cmd.CombinedOutput()
}

// goBinary is the go command on PATH: go test puts the bin directory of the
// toolchain that runs it first on PATH (since Go 1.19), so this is the
// toolchain that built the test binary.
func goBinary() string {
	return "go"
}
