package argocd

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// pluginImageUser is the plugin image's user (argocd/Dockerfile, test/images).
const pluginImageUser = "999:999"

// installPluginImage builds the plugin image with make images' builder
// (test/images), unpacks its filesystem, and puts imagewrap on binDir as
// tenancy: the CMP server then runs the image's binary as the sidecar would,
// read-only as uid 999.
func installPluginImage(ctx context.Context, dir, binDir string) error {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return fmt.Errorf("bwrap not found: install Debian's bubblewrap package (.ci/run does); the loop runs the plugin image's binary with it")
	}
	out := filepath.Join(dir, "images")
	build := exec.CommandContext(ctx, "go", "run", ".", "-out", out, "-version", "e2e")
	build.Dir = filepath.Join(env.repoRoot, "test", "images")
	build.Env = append(os.Environ(), "GOWORK=off")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build the images: %w\n%s", err, b)
	}
	rootfs := filepath.Join(dir, "plugin-image-rootfs")
	if err := unpackOCI(filepath.Join(out, "tenancy-argocd.oci.tar"), rootfs); err != nil {
		return fmt.Errorf("unpack the plugin image: %w", err)
	}
	env.tenancy = filepath.Join(rootfs, "usr", "local", "bin", "tenancy")
	wrap := exec.CommandContext(ctx, "go", "build",
		"-ldflags", "-X main.rootfs="+rootfs+" -X main.user="+pluginImageUser,
		"-o", filepath.Join(binDir, "tenancy"), "./argocd/imagewrap")
	wrap.Dir = filepath.Join(env.repoRoot, "test", "e2e")
	wrap.Env = append(os.Environ(), "GOWORK=off")
	if b, err := wrap.CombinedOutput(); err != nil {
		return fmt.Errorf("build imagewrap: %w\n%s", err, b)
	}
	return nil
}

// unpackOCI extracts the layers of the one image in an OCI layout tarball
// into dir. The layout and the layers are read with the standard library:
// index.json names the manifest, the manifest its layers, each a blob.
func unpackOCI(tarball, dir string) error {
	blobs := map[string][]byte{}
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		blobs[h.Name] = data
	}
	var index struct {
		Manifests []struct{ Digest string } `json:"manifests"`
	}
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		return fmt.Errorf("index.json: want one manifest (%v)", err)
	}
	blob := func(digest string) ([]byte, error) {
		b, ok := blobs["blobs/"+strings.Replace(digest, ":", "/", 1)]
		if !ok {
			return nil, fmt.Errorf("blob %s missing", digest)
		}
		return b, nil
	}
	m, err := blob(index.Manifests[0].Digest)
	if err != nil {
		return err
	}
	var manifest struct {
		Layers []struct {
			MediaType, Digest string
		} `json:"layers"`
	}
	if err := json.Unmarshal(m, &manifest); err != nil {
		return err
	}
	for _, l := range manifest.Layers {
		data, err := blob(l.Digest)
		if err != nil {
			return err
		}
		var r io.Reader = bytes.NewReader(data)
		if strings.HasSuffix(l.MediaType, "+gzip") || strings.HasSuffix(l.MediaType, ".gzip") {
			if r, err = gzip.NewReader(r); err != nil {
				return err
			}
		}
		if err := untarLayer(r, dir); err != nil {
			return err
		}
	}
	return nil
}

// untarLayer writes a layer's directories and files under dir; a path that
// would leave dir is refused.
func untarLayer(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(strings.TrimSuffix(h.Name, "/")) {
			return fmt.Errorf("layer entry %q leaves the root", h.Name)
		}
		p := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, data, os.FileMode(h.Mode)&0o777); err != nil {
				return err
			}
		}
	}
}
