package generator

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/include"
	"github.com/tenancy-dev/tenancy/generator/load"
)

// MaxAgreementSize caps the agreement file: the plugin runs inside Argo CD's
// repo-server and must not be made to read arbitrarily large input.
const MaxAgreementSize = 1 << 20 // 1 MiB

// ErrTooLarge is wrapped when an agreement exceeds MaxAgreementSize.
var ErrTooLarge = errors.New("agreement exceeds 1 MiB")

// ErrOutsideRoot is wrapped when a path would leave the directory it must stay in.
var ErrOutsideRoot = errors.New("path escapes the directory")

// StdinName is what messages call an agreement read from standard input, as
// in "<stdin>:3:5: field: message". The angle brackets keep it from being
// mistaken for a file of that name.
const StdinName = "<stdin>"

// Source is an agreement's bytes and the name messages call it by.
type Source struct {
	Path string // as the user wrote it, e.g. tenancy.toml
	Data []byte
	// Dir is the directory the agreement was read from, which its include
	// key's paths are relative to and may not leave; "" when it was not
	// read from one (standard input, the KRM function's inline agreement),
	// and then the agreement may include nothing.
	Dir string
	// FS, when set, holds the agreement's directory in Dir's place: an
	// agreement not on disk, such as one at a git revision. Its includes
	// are read from it, symbolic links refused as on disk.
	FS fs.FS
}

// ReadFile reads an agreement, refusing files over MaxAgreementSize.
func ReadFile(path string) (Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return Source{}, err
	}
	defer f.Close()
	src, err := Read(path, f)
	src.Dir = filepath.Dir(path)
	return src, err
}

// ReadFileIn reads the agreement at rel inside root. Absolute paths and paths
// that leave root (../, or a symlink pointing out) are refused: a repository
// must not make the renderer read files outside itself.
func ReadFileIn(root, rel string) (Source, error) {
	if rel == "" {
		return Source{}, fmt.Errorf("empty agreement path")
	}
	if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		return Source{}, fmt.Errorf("%s: %w %s: use a relative path inside it", rel, ErrOutsideRoot, root)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return Source{}, err
	}
	defer r.Close()
	f, err := r.Open(rel)
	if err != nil {
		if strings.Contains(err.Error(), "escapes") {
			return Source{}, fmt.Errorf("%s: %w %s", rel, ErrOutsideRoot, root)
		}
		return Source{}, err
	}
	defer f.Close()
	src, err := Read(rel, f)
	src.Dir = filepath.Join(root, filepath.Dir(rel))
	return src, err
}

// resolveIncludes reads the files the agreement root includes, inside
// src.Dir, and merges them into root. Paths and symbolic links that would
// leave src.Dir are refused by the os.Root they are read through.
func resolveIncludes(src Source, name string, root *load.Value) ([]string, diag.List) {
	if root.Table.Get(include.Key) == nil {
		return nil, nil
	}
	limits := include.Limits{MaxSize: MaxAgreementSize}
	fsys := src.FS
	switch {
	case fsys != nil:
	case src.Dir == "":
		return include.Resolve(root, name, nil, len(src.Data), limits)
	default:
		r, err := os.OpenRoot(src.Dir)
		if err != nil {
			return nil, diag.List{{Severity: diag.Error, Type: field.ErrorTypeInternal, File: name, Message: fmt.Sprintf("include: %v", err)}}
		}
		defer r.Close()
		fsys = r.FS()
	}
	dir := filepath.Dir(name)
	d := &include.Dir{FS: fsys, Self: filepath.Base(name), Name: func(n string) string { return filepath.Join(dir, filepath.FromSlash(n)) }}
	if src.FS != nil {
		// Not a path on disk: named as REV:path (diff --base), so an
		// included file is REV:dir/file, the revision kept.
		prefix := name[:strings.LastIndexAny(name, "/:")+1]
		d.Self = name[len(prefix):]
		d.Name = func(n string) string { return prefix + n }
	}
	return include.Resolve(root, name, d, len(src.Data), limits)
}

// Read reads an agreement from r, such as standard input, and calls it name
// in messages (StdinName for stdin). Like ReadFile it refuses more than
// MaxAgreementSize: it stops reading there rather than take in all of r.
func Read(name string, r io.Reader) (Source, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxAgreementSize+1))
	if err != nil {
		return Source{}, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxAgreementSize {
		return Source{}, fmt.Errorf("%s: %w", name, ErrTooLarge)
	}
	return Source{Path: name, Data: data}, nil
}
