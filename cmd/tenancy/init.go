package main

import (
	_ "embed"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
)

// initAgreement is what tenancy init writes: a small agreement every key of
// which is explained in a comment, the optional ones commented out with an
// example value. It passes check without a warning for Kueue, as written,
// and for KAI with its backend key saying so; tests
// hold its keys to the decoder's (init_test.go).
//
//go:embed init.toml
var initAgreement []byte

func runInit(e *env, args []string) int {
	fs := newFlagSet(e, "init", "init [--force] [FILE]", `
Write a commented agreement to FILE (default ./tenancy.toml; - prints it on
stdout) to start from: one flavor of 16 GPUs shared by three teams, with every
key explained and the optional ones (node labels, reclaim, lending windows,
priorities, departments, topology, guardrails, monitoring) commented out with
an example value. Its backend key says Kueue; it passes tenancy check as
written, and for KAI once the key says "kai".

An existing FILE is left alone (exit 1) unless --force replaces it.

Examples:
  tenancy init                          # ./tenancy.toml
  tenancy init clusters/prod/tenancy.toml
  tenancy init - | less                 # read it first
  tenancy init --force && tenancy check # start again`)
	force := fs.Bool("force", false, "replace FILE when it exists")
	positional, code, ok := parseArgs(e, fs, args)
	if !ok {
		return code
	}
	path, ok := agreementPath(e, "init", positional)
	if !ok {
		return exitUsage
	}
	if path == stdinPath {
		if _, err := e.stdout.Write(initAgreement); err != nil {
			fmt.Fprintf(e.stderr, "tenancy init: write output: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(e.dir, path)
	}
	if err := writeNew(full, initAgreement, *force); err != nil {
		var pe *iofs.PathError
		if errors.As(err, &pe) {
			pe.Path = path // as the user wrote it
		}
		if errors.Is(err, iofs.ErrExist) {
			fmt.Fprintf(e.stderr, "tenancy init: %s already exists: left alone (--force replaces it)\n", path)
		} else {
			fmt.Fprintf(e.stderr, "tenancy init: %v\n", err)
		}
		return exitFailure
	}
	fmt.Fprintf(e.stderr, "tenancy init: wrote %s; edit it, then run 'tenancy check%s'\n", path, fileArg(path))
	return exitOK
}

// fileArg is the FILE argument a command needs to read path again: none for
// the default.
func fileArg(path string) string {
	if path == "tenancy.toml" {
		return ""
	}
	return " " + path
}

// writeNew writes data to path. Without replace it creates the file
// exclusively, so an existing agreement is never overwritten, even by a race;
// with replace it writes a temporary file beside path and renames it over,
// so a reader never sees half a file.
func writeNew(path string, data []byte, replace bool) error {
	if !replace {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tenancy-init-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// noAgreementError is a missing agreement file, with how to start one: the
// error every command that reads an agreement gives when there is none.
type noAgreementError struct {
	err  error
	path string
}

func (e *noAgreementError) Error() string {
	return fmt.Sprintf("%v (no agreement yet? 'tenancy init%s' writes a commented one to start from)", e.err, fileArg(e.path))
}

func (e *noAgreementError) Unwrap() error { return e.err }

// withInitHint adds the hint to err when it says path does not exist.
func withInitHint(err error, path string) error {
	if errors.Is(err, iofs.ErrNotExist) {
		return &noAgreementError{err: err, path: path}
	}
	return err
}
