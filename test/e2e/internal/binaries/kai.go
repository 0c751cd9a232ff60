package binaries

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// KAIComponents are the KAI Scheduler programs the KAI suite runs, each a
// main package of the KAI source tree. The operator and the node-scale
// adjuster are left out: the suite starts the operands itself, with the
// arguments the operator gives them. The admission webhook runs out of
// cluster like the others (GPU sharing needs its mutation).
var KAIComponents = []string{"scheduler", "binder", "podgrouper", "queuecontroller", "podgroupcontroller", "admission"}

// KAISourceEnv names the environment variable that points at a KAI source
// tree or release tarball. KAI's Go module is not served by the module
// proxy, so the source comes from beside the clone.
const KAISourceEnv = "TENANCY_KAI_SRC"

// KAISet is a built KAI: its binaries and the source tree they came from.
type KAISet struct {
	// Paths maps a component of KAIComponents to its executable.
	Paths map[string]string
	// SrcDir is the KAI source tree (unpacked from the tarball or the tree
	// TENANCY_KAI_SRC names); the CRDs are under deployments/kai-scheduler/crds.
	SrcDir string
	// Key is the SHA-256 (hex, shortened) of the tarball or tree.
	Key string
	// Built is true when this call had to compile.
	Built bool
	// BuildTime is how long the compile took when Built.
	BuildTime time.Duration
}

// CRDDir is where the KAI source keeps its CRDs.
func (s *KAISet) CRDDir() string {
	return filepath.Join(s.SrcDir, "deployments", "kai-scheduler", "crds")
}

// KAISource returns the KAI source to build: $TENANCY_KAI_SRC, else the
// v0.17.0 release tarball in ../shared/src beside the clone whose root is
// repoRoot. It returns an error saying how to provide one when neither exists.
func KAISource(repoRoot string) (string, error) {
	if p := os.Getenv(KAISourceEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", KAISourceEnv, p, err)
		}
		return p, nil
	}
	p := filepath.Join(repoRoot, "..", "shared", "src", "kai-scheduler-v0.17.0.tar.gz")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no KAI source: %s is absent and %s is not set; set %s to a KAI Scheduler v0.17.0 source tree or its release tarball (git archive of tag v0.17.0)", p, KAISourceEnv, KAISourceEnv)
	}
	return filepath.Abs(p)
}

// EnsureKAI returns KAI's binaries built from src (a tarball or a source
// tree), reusing the copy in cacheDir/kai-<sha256>-<components> when its
// stamp names the same Go toolchain. A tarball is unpacked into that
// directory first.
func EnsureKAI(ctx context.Context, src, cacheDir string, log io.Writer) (*KAISet, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	var key string
	if fi.IsDir() {
		key, err = hashTree(src)
	} else {
		key, err = hashFile(src)
	}
	if err != nil {
		return nil, fmt.Errorf("hash KAI source %s: %w", src, err)
	}
	// A set of components has a directory of its own: checkouts that build
	// different sets share the cache without rebuilding over each other.
	sum := sha256.Sum256([]byte(strings.Join(KAIComponents, " ")))
	outDir := filepath.Join(cacheDir, "kai-"+key+"-"+hex.EncodeToString(sum[:4]))
	set := &KAISet{Paths: map[string]string{}, Key: key}
	srcDir := src
	if !fi.IsDir() {
		srcDir = filepath.Join(outDir, "src")
		if err := unpackOnce(src, srcDir); err != nil {
			return nil, err
		}
	}
	set.SrcDir = srcDir
	binDir := filepath.Join(outDir, "bin")
	for _, c := range KAIComponents {
		set.Paths[c] = filepath.Join(binDir, c)
	}

	stamp := fmt.Sprintf("kai source sha256 %s\ncomponents %s\ngo %s %s/%s\nflags CGO_ENABLED=0 -trimpath -ldflags=-s -w\n",
		key, strings.Join(KAIComponents, " "), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	stampPath := filepath.Join(outDir, "stamp")
	if have, err := os.ReadFile(stampPath); err == nil && bytes.Equal(have, []byte(stamp)) {
		ok := true
		for _, p := range set.Paths {
			if _, err := os.Stat(p); err != nil {
				ok = false
			}
		}
		if ok {
			return set, nil
		}
	}

	tmpBin := fmt.Sprintf("%s.tmp-%d", binDir, os.Getpid())
	if err := os.MkdirAll(tmpBin, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmpBin)
	fmt.Fprintf(log, "building KAI Scheduler %s from %s (cold: minutes and ~1 GB of modules; later runs reuse %s)\n",
		strings.Join(KAIComponents, ", "), src, outDir)
	start := time.Now()
	args := []string{"build", "-trimpath", "-ldflags", "-s -w", "-o", tmpBin + string(filepath.Separator)}
	for _, c := range KAIComponents {
		args = append(args, "./cmd/"+c)
	}
	cmd := exec.CommandContext(ctx, goBinary(), args...)
	cmd.Dir = srcDir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build KAI in %s: %w\n%s", srcDir, err, out)
	}
	os.RemoveAll(binDir)
	if err := os.Rename(tmpBin, binDir); err != nil {
		return nil, fmt.Errorf("install KAI binaries: %w", err)
	}
	if err := os.WriteFile(stampPath, []byte(stamp), 0o644); err != nil {
		return nil, err
	}
	set.Built = true
	set.BuildTime = time.Since(start)
	fmt.Fprintf(log, "built KAI Scheduler in %s\n", set.BuildTime.Round(time.Second))
	return set, nil
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// hashTree hashes every regular file's path and content under dir, .git
// excluded, so an edited tree is rebuilt.
func hashTree(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// unpackOnce unpacks a gzip tarball into dst, dropping its single top-level
// directory (a git archive's prefix). A marker file says the unpack finished;
// a half-unpacked tree is removed and unpacked again.
func unpackOnce(tarball, dst string) error {
	marker := dst + ".unpacked"
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("unpack %s: %w", tarball, err)
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("unpack %s: %w", tarball, err)
		}
		name := filepath.ToSlash(filepath.Clean(hdr.Name))
		if i := strings.IndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		} else {
			continue // the top-level directory itself, or pax headers
		}
		if name == "" || strings.HasPrefix(name, "../") || filepath.IsAbs(name) {
			continue
		}
		p := filepath.Join(dst, filepath.FromSlash(name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if hdr.Mode&0o111 != 0 {
				mode = 0o755
			}
			out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, tr); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(hdr.Linkname, p); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(marker, nil, 0o644)
}

// EnsureKAIControlPlane returns the programs the KAI suite runs beside KAI
// (etcd, kube-apiserver, kube-controller-manager, KWOK), from the same
// tools modules and cache as the control-plane suite's, and KWOK's module
// directory for its Stages.
func EnsureKAIControlPlane(ctx context.Context, toolsRoot, cacheDir string, log io.Writer) (*Set, error) {
	var comps []Component
	for _, c := range Components {
		switch c.Name {
		case "etcd", "kube-apiserver", "kube-controller-manager", "kwok":
			comps = append(comps, c)
		}
	}
	set, err := EnsureComponents(ctx, toolsRoot, cacheDir, comps, log)
	if err != nil {
		return nil, err
	}
	info, err := listModule(ctx, filepath.Join(toolsRoot, "kwok"), "sigs.k8s.io/kwok")
	if err != nil {
		return nil, err
	}
	set.KwokDir = info.Dir
	return set, nil
}
