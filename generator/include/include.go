// Package include reads the files an agreement includes (include =
// ["teams/*.toml"]) and merges their [teams.NAME] and [departments.NAME]
// tables into the agreement's parsed tree, before decoding: every later
// step sees one agreement, and every value keeps the file it was written
// in (diag.Pos.File), so a problem in an included file is reported there.
//
// It reads through an fs.FS holding the agreement's directory, so tests
// hand it an fstest.MapFS; the facade hands it an os.Root, which no path or
// symbolic link can leave.
package include

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/load"
)

// Key is the agreement's key that names the files to include.
const Key = "include"

// mergedKeys are the tables an included file may hold, besides include
// itself: one file per team or department is what CODEOWNERS can match.
var mergedKeys = []string{"teams", "departments"}

// MaxFiles bounds how many files one agreement may include, so a glob over a
// large tree cannot make the renderer open thousands of files.
const MaxFiles = 1000

// Dir is where an agreement's includes are read from.
type Dir struct {
	// FS holds the agreement's directory; patterns are relative to it.
	FS fs.FS
	// Self is the agreement's own name in FS; "" when it is not in FS.
	Self string
	// Name turns a name in FS into the name diagnostics call the file
	// (the agreement's path as the user gave it, joined with the name).
	Name func(string) string
}

// Limits are the size limits of an agreement, per file and in total.
type Limits struct {
	// MaxSize caps each file and, too, the agreement and its includes
	// together.
	MaxSize int
}

// Resolve reads what the document root (the agreement, named file, of size
// bytes) includes, and theirs, and merges their tables into root. dir nil
// means the agreement was not read from a directory (standard input, the
// KRM function's inline spec.agreement): an include is then refused. It
// returns the files included, as diagnostics name them, in the order read,
// and every problem found.
func Resolve(root *load.Value, file string, dir *Dir, size int, limits Limits) ([]string, diag.List) {
	r := &resolver{root: root, dir: dir, total: size, limits: limits, seen: map[string]string{}}
	if dir != nil && dir.Self != "" {
		r.seen[dir.Self] = file
	}
	stack := []string{}
	if dir != nil {
		stack = append(stack, dir.Self)
	}
	r.file(root, file, stack)
	return r.files, r.diags
}

type resolver struct {
	root   *load.Value
	dir    *Dir
	limits Limits
	total  int
	files  []string
	seen   map[string]string // name in FS -> where it was first included
	diags  diag.List
	full   bool // the total size or file count is exceeded: read no more
}

func (r *resolver) errorf(typ field.ErrorType, pos diag.Pos, file string, path *field.Path, format string, args ...any) {
	if pos.File != "" {
		file, pos.File = pos.File, ""
	}
	r.diags = append(r.diags, diag.Diagnostic{Severity: diag.Error, Type: typ, File: file, Pos: pos, Path: path, Message: fmt.Sprintf(format, args...)})
}

// file resolves the include key of doc, the document named file; stack
// holds the names in FS of the files including it, doc's own last.
func (r *resolver) file(doc *load.Value, file string, stack []string) {
	v := doc.Table.Get(Key)
	if v == nil {
		return
	}
	p := field.NewPath(Key)
	if v.Kind != load.Array {
		r.errorf(field.ErrorTypeTypeInvalid, v.Pos, file, p, "must be an array of paths, such as [\"teams/*.toml\"]")
		return
	}
	if r.dir == nil {
		r.errorf(field.ErrorTypeForbidden, v.Pos, file, p, "the agreement is not read from a directory (standard input, or the KRM function's inline spec.agreement), so there is nothing to include from: give the agreement as a file (tenancy FILE, spec.file)")
		return
	}
	for i, item := range v.Items {
		ip := p.Index(i)
		if item.Kind != load.String {
			r.errorf(field.ErrorTypeTypeInvalid, item.Pos, file, ip, "must be a string, a path or glob such as \"teams/*.toml\"")
			continue
		}
		for _, name := range r.matches(item, file, ip) {
			if r.full {
				return
			}
			r.include(name, item, file, ip, stack)
		}
	}
}

// matches returns the files a pattern names, sorted; none after a problem,
// which is reported.
func (r *resolver) matches(item *load.Value, file string, p *field.Path) []string {
	pattern := path.Clean(item.Str)
	if item.Str == "" || path.IsAbs(item.Str) || strings.Contains(item.Str, `\`) || !fs.ValidPath(pattern) || pattern == "." {
		r.errorf(field.ErrorTypeForbidden, item.Pos, file, p, "%q leaves the agreement's directory: write a relative path inside it, with forward slashes and no ../", item.Str)
		return nil
	}
	names, err := fs.Glob(r.dir.FS, pattern)
	if err != nil {
		r.errorf(field.ErrorTypeInvalid, item.Pos, file, p, "%q is not a valid pattern: %v", item.Str, err)
		return nil
	}
	if len(names) == 0 {
		r.errorf(field.ErrorTypeNotFound, item.Pos, file, p, "%q matches no file in the agreement's directory: a missing file would drop its teams, so it is an error (remove the pattern if the files are gone)", item.Str)
		return nil
	}
	slices.Sort(names)
	return names
}

// include reads, checks and merges the file name, named by the pattern
// item of file.
func (r *resolver) include(name string, item *load.Value, file string, p *field.Path, stack []string) {
	shown := r.dir.Name(name)
	if i := slices.Index(stack, name); i >= 0 {
		cycle := make([]string, 0, len(stack)-i+1)
		for _, s := range stack[i:] {
			cycle = append(cycle, r.dir.Name(s))
		}
		r.errorf(field.ErrorTypeInvalid, item.Pos, file, p, "includes %s, which includes this file: a cycle (%s -> %s)", shown, strings.Join(cycle, " -> "), shown)
		return
	}
	if by, ok := r.seen[name]; ok {
		r.errorf(field.ErrorTypeDuplicate, item.Pos, file, p, "%s is already included (by %s): include each file once", shown, by)
		return
	}
	r.seen[name] = fmt.Sprintf("%s:%d:%d", file, item.Pos.Line, item.Pos.Column)
	if len(r.files) >= MaxFiles {
		r.errorf(field.ErrorTypeTooMany, item.Pos, file, p, "an agreement includes at most %d files", MaxFiles)
		r.full = true
		return
	}
	data, err := r.read(name)
	if err != nil {
		r.errorf(field.ErrorTypeForbidden, item.Pos, file, p, "%s: %v", shown, err)
		return
	}
	r.total += len(data)
	if r.total > r.limits.MaxSize {
		r.errorf(field.ErrorTypeTooLong, item.Pos, file, p, "with %s the agreement and its includes are over %d bytes (1 MiB), the limit for all of them together", shown, r.limits.MaxSize)
		r.full = true
		return
	}
	r.files = append(r.files, shown)
	doc, diags := load.Parse(shown, data)
	r.diags = append(r.diags, diags...)
	if len(diags.Errors()) > 0 {
		return
	}
	stamp(doc, shown)
	for _, k := range doc.Table.Keys {
		if k != Key && !slices.Contains(mergedKeys, k) {
			r.errorf(field.ErrorTypeForbidden, doc.Table.Get(k).KeyPos, "", diag.Key(nil, k), "an included file holds only [teams.NAME] and [departments.NAME] tables (and include): write %s in the agreement's own file", k)
		}
	}
	r.merge(doc)
	r.file(doc, shown, append(stack[:len(stack):len(stack)], name))
}

// read reads a regular file, refusing symbolic links (even ones that stay
// inside: a link makes CODEOWNERS and the renderer see different files) and
// anything over the size limit.
func (r *resolver) read(name string) ([]byte, error) {
	info, err := fs.Lstat(r.dir.FS, name)
	if err != nil {
		return nil, err
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return nil, errors.New("is a symbolic link: include the file it points to instead")
	case !info.Mode().IsRegular():
		return nil, errors.New("is not a regular file")
	}
	f, err := r.dir.FS.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(r.limits.MaxSize)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > r.limits.MaxSize {
		return nil, fmt.Errorf("is over %d bytes (1 MiB), the limit for each file", r.limits.MaxSize)
	}
	return data, nil
}

// merge adds the teams and departments of an included document to the
// agreement's. A name defined twice is refused at its second definition.
func (r *resolver) merge(doc *load.Value) {
	for _, k := range mergedKeys {
		src := doc.Table.Get(k)
		if src == nil {
			continue
		}
		if src.Kind != load.Table {
			r.errorf(field.ErrorTypeTypeInvalid, src.Pos, "", field.NewPath(k), "must be a table")
			continue
		}
		dst := r.root.Table.Get(k)
		if dst == nil {
			dst = load.NewTable(src.KeyPos)
			r.root.Table.Add(k, dst)
		}
		if dst.Kind != load.Table {
			continue // the agreement's own file is wrong there: decode says so
		}
		for _, name := range src.Table.Keys {
			v := src.Table.Get(name)
			if !dst.Table.Add(name, v) {
				first := dst.Table.Get(name).KeyPos
				r.errorf(field.ErrorTypeDuplicate, v.KeyPos, "", diag.Key(field.NewPath(k), name), "%s %q is already defined at %s: define it in one file", strings.TrimSuffix(k, "s"), name, where(first, r.dir.Name(r.dir.Self)))
			}
		}
	}
}

// where is a position as a diagnostic prints it; file names the agreement's
// own file, for a position without one.
func where(p diag.Pos, file string) string {
	if p.File != "" {
		file = p.File
	}
	return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Column)
}

// stamp records file in every position of v, so diagnostics about its
// values name it.
func stamp(v *load.Value, file string) {
	v.KeyPos.File, v.Pos.File = file, file
	for _, item := range v.Items {
		stamp(item, file)
	}
	if v.Table != nil {
		for _, k := range v.Table.Keys {
			stamp(v.Table.Get(k), file)
		}
	}
}
