package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

const repoRoot = "../.."

// built is the static binary, built once for every test.
var built []byte

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tenancy-images-")
	if err != nil {
		panic(err)
	}
	bin := filepath.Join(dir, "tenancy")
	if err := BuildBinary(repoRoot, bin); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	if built, err = os.ReadFile(bin); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// dockerfile reads the final stage's USER, ENTRYPOINT and WORKDIR.
func dockerfile(t *testing.T, path string) Spec {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s Spec
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "FROM "):
			s = Spec{} // a new stage
		case strings.HasPrefix(line, "USER "):
			s.User = strings.TrimPrefix(line, "USER ")
		case strings.HasPrefix(line, "WORKDIR "):
			s.WorkingDir = strings.TrimPrefix(line, "WORKDIR ")
		case strings.HasPrefix(line, "ENTRYPOINT "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "ENTRYPOINT ")), &s.Entrypoint); err != nil {
				t.Fatalf("%s: ENTRYPOINT: %v", path, err)
			}
		}
	}
	return s
}

// TestSpecsMatchDockerfiles: the images built here are the images the
// Dockerfiles describe for a container engine: same user, entrypoint and
// working directory.
func TestSpecsMatchDockerfiles(t *testing.T) {
	for _, s := range Specs {
		t.Run(s.Name, func(t *testing.T) {
			want := Spec{User: s.User, Entrypoint: s.Entrypoint, WorkingDir: s.WorkingDir}
			if diff := cmp.Diff(want, dockerfile(t, s.Dockerfile)); diff != "" {
				t.Errorf("%s's final stage (-built here,+Dockerfile):\n%s", s.Dockerfile, diff)
			}
		})
	}
}

// readOCI reads back the one image of an OCI layout tarball.
func readOCI(t *testing.T, path string) v1.Image {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	untar(t, f, dir)
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("%s holds %d images, want 1", path, len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// untar writes a tar stream under dir; it refuses paths that leave dir.
func untar(t *testing.T, r io.Reader, dir string) []string {
	t.Helper()
	var names []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		if !filepath.IsLocal(h.Name) {
			t.Fatalf("tar entry %q leaves the directory", h.Name)
		}
		names = append(names, h.Name)
		p := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, os.FileMode(h.Mode)&0o777); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("tar entry %q: unexpected type %c", h.Name, h.Typeflag)
		}
	}
}

// rootfs unpacks an image's layers into a directory and returns the files.
func rootfs(t *testing.T, img v1.Image) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, untar(t, rc, dir)...)
		rc.Close()
	}
	return dir, files
}

// TestImages builds both images into OCI tarballs and checks what a cluster
// would run: a non-root user, the entrypoint, labels, no shell or anything
// else beside the binary, and the same digest from the same binary.
func TestImages(t *testing.T) {
	for _, s := range Specs {
		t.Run(s.Name, func(t *testing.T) {
			img, err := Image(built, s, "test")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), s.Name+".oci.tar")
			digest, err := WriteOCI(img, path)
			if err != nil {
				t.Fatal(err)
			}
			back := readOCI(t, path)
			if got, _ := back.Digest(); got != digest {
				t.Errorf("read back digest %s, wrote %s", got, digest)
			}
			again, err := Image(built, s, "test")
			if err != nil {
				t.Fatal(err)
			}
			if d, _ := again.Digest(); d != digest {
				t.Errorf("a second build has digest %s, the first %s: builds are not reproducible", d, digest)
			}
			cfg, err := back.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Config.User == "" || strings.HasPrefix(cfg.Config.User, "0:") || cfg.Config.User == "0" || cfg.Config.User == "root" {
				t.Errorf("user %q: the image must not run as root", cfg.Config.User)
			}
			if diff := cmp.Diff(s.Entrypoint, cfg.Config.Entrypoint); diff != "" {
				t.Errorf("entrypoint (-want,+got):\n%s", diff)
			}
			if cfg.Config.Labels["org.opencontainers.image.title"] != s.Name || cfg.Config.Labels["org.opencontainers.image.source"] == "" {
				t.Errorf("labels %v: want the OCI title and source", cfg.Config.Labels)
			}
			if cfg.OS != "linux" {
				t.Errorf("os %q, want linux", cfg.OS)
			}
			_, files := rootfs(t, back)
			regular := slices.DeleteFunc(slices.Clone(files), func(f string) bool { return strings.HasSuffix(f, "/") })
			if diff := cmp.Diff([]string{Binary[1:]}, regular); diff != "" {
				t.Errorf("files in the image (-want,+got): only the binary, no shell:\n%s", diff)
			}
		})
	}
}

// bwrap runs the image's entrypoint from its unpacked filesystem as the
// image's user, with the root read-only and no network, as a cluster with
// readOnlyRootFilesystem runs it.
func bwrap(t *testing.T, root string, s Spec, binds []string, stdin []byte, args ...string) []byte {
	t.Helper()
	path, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("SKIPPED LOUDLY: bwrap (Debian's bubblewrap) is not installed, so the images' binaries are not run read-only as their users; .ci/run installs it")
	}
	uid, gid, _ := strings.Cut(s.User, ":")
	argv := []string{"--ro-bind", root, "/", "--unshare-user", "--uid", uid, "--gid", gid, "--unshare-net", "--die-with-parent"}
	argv = append(argv, binds...)
	if s.WorkingDir != "" {
		argv = append(argv, "--chdir", s.WorkingDir)
	}
	argv = append(append(argv, s.Entrypoint...), args...)
	cmd := exec.Command(path, argv...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bwrap %v: %v\n%s", argv, err, stderr.String())
	}
	return out
}

func spec(t *testing.T, name string) Spec {
	t.Helper()
	for _, s := range Specs {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no image %s", name)
	return Spec{}
}

// hostRun runs the same binary directly, for what the image must print.
func hostRun(t *testing.T, stdin []byte, dir string, args ...string) []byte {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tenancy")
	if err := os.WriteFile(bin, built, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tenancy %v: %v", args, err)
	}
	return out
}

// TestArgoCDImageRunsReadOnly: the plugin image's binary renders the
// reference agreement from stdin as uid 999 on a read-only root.
func TestArgoCDImageRunsReadOnly(t *testing.T) {
	s := spec(t, "tenancy-argocd")
	img, err := Image(built, s, "test")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := rootfs(t, img)
	agreement, err := os.ReadFile(filepath.Join(repoRoot, "tenancy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	got := bwrap(t, root, s, nil, agreement, "render", "-")
	want := hostRun(t, agreement, repoRoot, "render", "-")
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("render in the image (-host,+image):\n%s", diff)
	}
}

// TestKustomizeImageRunsReadOnly: the KRM function image reads a
// ResourceList on stdin and the agreement from the read-only /work mount,
// as kustomize's container form runs it, as uid 65532 on a read-only root.
func TestKustomizeImageRunsReadOnly(t *testing.T) {
	s := spec(t, "tenancy-kustomize")
	img, err := Image(built, s, "test")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := rootfs(t, img)
	work := t.TempDir()
	agreement, err := os.ReadFile(filepath.Join(repoRoot, "tenancy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "tenancy.toml"), agreement, 0o644); err != nil {
		t.Fatal(err)
	}
	rl := generatorList
	got := bwrap(t, root, s, []string{"--ro-bind", work, "/work"}, rl)
	want := hostRun(t, rl, work, "kustomize")
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("KRM function in the image (-host,+image):\n%s", diff)
	}
	if !bytes.Contains(got, []byte("kind: ClusterQueue")) {
		t.Errorf("the function's output has no ClusterQueue:\n%.400s", got)
	}
}

// TestImagesReadSplitAgreements: both images read an agreement split into
// files (examples/split, include = ["departments/*.toml"]) from a read-only
// mount exactly as the binary on the host does: the plugin's generate in
// the Application's directory, the KRM function from spec.file in /work.
func TestImagesReadSplitAgreements(t *testing.T) {
	split, err := filepath.Abs(filepath.Join(repoRoot, "examples", "split"))
	if err != nil {
		t.Fatal(err)
	}
	want := hostRun(t, nil, repoRoot, "render", "examples/departments/tenancy.toml")

	s := spec(t, "tenancy-argocd")
	img, err := Image(built, s, "test")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := rootfs(t, img)
	got := bwrap(t, root, s, []string{"--ro-bind", split, "/tmp", "--chdir", "/tmp"}, nil, "argocd", "generate")
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("argocd generate of examples/split in the image differs from the one-file agreement (-want,+got):\n%s", diff)
	}

	s = spec(t, "tenancy-kustomize")
	if img, err = Image(built, s, "test"); err != nil {
		t.Fatal(err)
	}
	root, _ = rootfs(t, img)
	rl := generatorList
	got = bwrap(t, root, s, []string{"--ro-bind", split, "/work"}, rl)
	if diff := cmp.Diff(string(hostRun(t, rl, split, "kustomize")), string(got)); diff != "" {
		t.Errorf("KRM function in the image (-host,+image):\n%s", diff)
	}
	if !bytes.Contains(got, []byte("name: genomics")) {
		t.Errorf("the function's output has no team of an included file:\n%.400s", got)
	}
}

// generatorList is the ResourceList kustomize hands the function: a
// TenancyGenerator reading tenancy.toml from its working directory.
var generatorList = []byte(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
functionConfig:
  apiVersion: tenancy.dev/v1alpha1
  kind: TenancyGenerator
  metadata:
    name: gpu-tenancy
  spec:
    file: tenancy.toml
`)
