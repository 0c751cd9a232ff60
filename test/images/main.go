// Command images builds tenancy's two container images, the Argo CD plugin
// sidecar (argocd/Dockerfile) and the kustomize KRM function
// (kustomize/Dockerfile), without a container engine: a Go binary needs no
// base image, so each image is one layer holding the static binary, written
// with go-containerregistry as an OCI image layout in a tarball.
//
//	go run . -out ../../bin            # bin/tenancy-argocd.oci.tar, bin/tenancy-kustomize.oci.tar
//
// It prints each image's digest, which the release steps pin the install
// Component to (docs/argocd.md).
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Spec is one image: what the Dockerfile beside the wrapper says, which
// TestSpecsMatchDockerfiles holds equal.
type Spec struct {
	Name        string   // the image's name, e.g. tenancy-argocd
	Dockerfile  string   // relative to the repository root
	User        string   // uid:gid, never root
	Entrypoint  []string // the binary first
	WorkingDir  string   // "" for none
	Description string
}

// Binary is where the static tenancy binary sits in both images, on PATH
// for the plugin's generate command.
const Binary = "/usr/local/bin/tenancy"

// Specs are the two images.
var Specs = []Spec{
	{
		Name: "tenancy-argocd", Dockerfile: "argocd/Dockerfile", User: "999:999",
		Entrypoint:  []string{Binary},
		Description: "tenancy as an Argo CD Config Management Plugin sidecar: renders tenancy.toml into Kueue or KAI manifests",
	},
	{
		Name: "tenancy-kustomize", Dockerfile: "kustomize/Dockerfile", User: "65532:65532",
		Entrypoint: []string{Binary, "kustomize"}, WorkingDir: "/work",
		Description: "tenancy as a kustomize KRM function: renders tenancy.toml into Kueue or KAI manifests",
	},
}

// epoch is every file's and the image's timestamp: the same binary gives
// the same digest on every build.
var epoch = time.Unix(0, 0).UTC()

// BuildBinary builds the static tenancy binary from the repository at root.
func BuildBinary(root, out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/tenancy")
	cmd.Dir = root
	// CGO off: a static binary that runs with no libc in the image.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build tenancy: %w\n%s", err, b)
	}
	return nil
}

// layer is a tar of the image's files: the binary, the working directory
// the kustomize function's mount lands in, and /tmp, where the sidecar
// mounts its own emptyDir (distroless has it too).
func layer(binary []byte, s Spec) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := []string{"tmp/", "usr/", "usr/local/", "usr/local/bin/"}
	if s.WorkingDir != "" {
		dirs = append(dirs, s.WorkingDir[1:]+"/")
	}
	for _, d := range dirs {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: Binary[1:], Mode: 0o755, Size: int64(len(binary)), ModTime: epoch}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// Image builds the image of s around the binary.
func Image(binary []byte, s Spec, version string) (v1.Image, error) {
	l, err := layer(binary, s)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), l)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.User = s.User
	cfg.Config.Entrypoint = s.Entrypoint
	cfg.Config.WorkingDir = s.WorkingDir
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":       s.Name,
		"org.opencontainers.image.description": s.Description,
		"org.opencontainers.image.source":      "https://github.com/tenancy-dev/tenancy",
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.version":     version,
	}
	return mutate.ConfigFile(img, cfg)
}

// WriteOCI writes img as an OCI image layout, tarred, at path, and returns
// its digest.
func WriteOCI(img v1.Image, path string) (v1.Hash, error) {
	dir, err := os.MkdirTemp("", "tenancy-oci-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := p.AppendImage(img); err != nil {
		return v1.Hash{}, err
	}
	if err := tarDir(dir, path); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

// tarDir tars the files under dir into path, in a stable order.
func tarDir(dir, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name, h.ModTime = filepath.ToSlash(rel), epoch
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func main() {
	out := flag.String("out", "../../bin", "directory for the OCI tarballs")
	version := flag.String("version", "dev", "the images' org.opencontainers.image.version label")
	flag.Parse()
	if err := run(*out, *version); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(out, version string) error {
	root, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	bin := filepath.Join(out, "tenancy-linux-static")
	if err := BuildBinary(root, bin); err != nil {
		return err
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	for _, s := range Specs {
		img, err := Image(binary, s, version)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		path := filepath.Join(out, s.Name+".oci.tar")
		digest, err := WriteOCI(img, path)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		fmt.Printf("%s %s@%s\n", path, s.Name, digest)
	}
	return nil
}
