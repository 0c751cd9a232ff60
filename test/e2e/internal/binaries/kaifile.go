package binaries

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// KAISourceFile returns one file of a KAI source (KAISource's: a release
// tarball or a source tree), by its path from the source's root, e.g.
// deployments/kai-scheduler/crds/kai.scheduler_schedulingshards.yaml: for
// the suites that need one of KAI's files without building KAI.
func KAISourceFile(src, rel string) ([]byte, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src, err)
	}
	archive := tar.NewReader(gz)
	for {
		hdr, err := archive.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s holds no %s", src, rel)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", src, err)
		}
		// The tarball's one top-level directory (kai-scheduler-v0.17.0/)
		// comes before the path.
		if _, name, ok := strings.Cut(filepath.ToSlash(hdr.Name), "/"); ok && name == rel && hdr.Typeflag == tar.TypeReg {
			return io.ReadAll(archive)
		}
	}
}
