package main

import (
	"bytes"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// gitTree is the directory of an agreement at a git revision, as an fs.FS,
// so diff --base reads a split agreement's includes at that revision as
// render reads them from disk. It lists the directory once, when first
// asked, and reads a file's blob only when it is opened: only the files the
// agreement includes are read.
type gitTree struct {
	e      *env
	commit string
	dir    string // the agreement's directory from the repository's root; "." for the root

	once    sync.Once
	entries map[string]gitEntry // path below dir -> its entry; directories included
}

type gitEntry struct {
	mode   fs.FileMode
	object string // the blob; "" for a directory
}

func (t *gitTree) load() {
	t.entries = map[string]gitEntry{".": {mode: fs.ModeDir}}
	args := []string{"ls-tree", "-r", "-z", "--full-tree", t.commit}
	if t.dir != "." {
		args = append(args, "--", t.dir+"/")
	}
	out, err := git(t.e, args...)
	if err != nil {
		return // as an empty directory: include then says what matches nothing
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		// "<mode> <type> <object>\t<path>"
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		fields := bytes.Fields(meta)
		if !ok || len(fields) != 3 || string(fields[1]) != "blob" {
			continue // a submodule is no file of the agreement
		}
		rel := string(name)
		if t.dir != "." {
			rel = strings.TrimPrefix(rel, t.dir+"/")
		}
		mode := fs.FileMode(0o644)
		if string(fields[0]) == "120000" {
			mode = fs.ModeSymlink | 0o777
		}
		t.entries[rel] = gitEntry{mode: mode, object: string(fields[2])}
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			t.entries[d] = gitEntry{mode: fs.ModeDir | 0o755}
		}
	}
}

func (t *gitTree) entry(op, name string) (gitEntry, error) {
	t.once.Do(t.load)
	if !fs.ValidPath(name) {
		return gitEntry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	en, ok := t.entries[name]
	if !ok {
		return gitEntry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return en, nil
}

// Open opens a regular file, reading its blob.
func (t *gitTree) Open(name string) (fs.File, error) {
	en, err := t.entry("open", name)
	if err != nil {
		return nil, err
	}
	if !en.mode.IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	data, err := git(t.e, "cat-file", "blob", en.object)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &gitFile{info: gitInfo{name: path.Base(name), mode: en.mode, size: int64(len(data))}, r: bytes.NewReader(data)}, nil
}

// ReadDir lists a directory, sorted by name.
func (t *gitTree) ReadDir(name string) ([]fs.DirEntry, error) {
	en, err := t.entry("readdir", name)
	if err != nil {
		return nil, err
	}
	if !en.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	var out []fs.DirEntry
	for p, child := range t.entries {
		if p != "." && path.Dir(p) == name {
			out = append(out, fs.FileInfoToDirEntry(gitInfo{name: path.Base(p), mode: child.mode}))
		}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// Stat describes a file without reading it; a link is not followed (the
// agreement refuses links anyway).
func (t *gitTree) Stat(name string) (fs.FileInfo, error) { return t.Lstat(name) }

// Lstat describes a file, a link as a link.
func (t *gitTree) Lstat(name string) (fs.FileInfo, error) {
	en, err := t.entry("lstat", name)
	if err != nil {
		return nil, err
	}
	return gitInfo{name: path.Base(name), mode: en.mode}, nil
}

// ReadLink is not needed by include (it refuses every link) but completes
// fs.ReadLinkFS, which fs.Lstat requires.
func (t *gitTree) ReadLink(name string) (string, error) {
	return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
}

type gitInfo struct {
	name string
	mode fs.FileMode
	size int64
}

func (i gitInfo) Name() string       { return i.name }
func (i gitInfo) Size() int64        { return i.size }
func (i gitInfo) Mode() fs.FileMode  { return i.mode }
func (i gitInfo) ModTime() time.Time { return time.Time{} }
func (i gitInfo) IsDir() bool        { return i.mode.IsDir() }
func (i gitInfo) Sys() any           { return nil }

type gitFile struct {
	info gitInfo
	r    io.Reader
}

func (f *gitFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *gitFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *gitFile) Close() error               { return nil }
