// Package kustomize is the KRM function that renders a tenancy agreement
// inside `kustomize build --enable-alpha-plugins --enable-exec`. It speaks the
// KRM Functions Specification through kyaml's fn/framework: a ResourceList
// comes in on stdin with a TenancyGenerator as its functionConfig, and one
// goes out holding the rendered objects, or, when anything is wrong, only
// results and no items.
package kustomize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/tenancy-dev/tenancy/generator"
)

// MaxInputSize caps the ResourceList read from stdin. A generator receives
// only its functionConfig, so anything near this size is not a kustomization
// the function should be processing.
const MaxInputSize = 32 << 20 // 32 MiB

// ErrInputTooLarge is returned when stdin exceeds MaxInputSize.
var ErrInputTooLarge = errors.New("ResourceList input exceeds 32 MiB")

// Generator is the function's framework.ResourceListProcessor: it decodes the
// TenancyGenerator, renders its agreement and appends the objects to the
// items. It never leaves partial output: on any error the items are emptied
// and the ResourceList carries only results.
type Generator struct {
	// Dir is the directory spec.file is read from and confined to. kustomize
	// runs an exec function in the kustomization's directory, so the CLI
	// passes its working directory.
	Dir string
}

// Process implements framework.ResourceListProcessor. A failure is returned
// as framework.Results, which are also in rl.Results.
func (g Generator) Process(rl *framework.ResourceList) error {
	items, results := g.generate(rl)
	rl.Results = append(rl.Results, results...)
	if results.ExitCode() != 0 {
		rl.Items = nil
		return results
	}
	rl.Items = items
	return nil
}

func (g Generator) generate(rl *framework.ResourceList) ([]*yaml.RNode, framework.Results) {
	cfg, problems := decodeConfig(rl.FunctionConfig)
	if problems != nil {
		return nil, problems
	}
	src, res := g.source(cfg)
	if res != nil {
		return nil, framework.Results{res}
	}
	rendered, err := generator.Render(src, cfg.Options)
	if err != nil {
		return nil, renderFailure(cfg, err)
	}
	diagnostics := diagnosticResults(cfg, rendered.Warnings)

	items := passThrough(rl.Items, cfg)
	for _, obj := range rendered.Objects {
		node, err := yaml.Parse(string(obj.YAML))
		if err != nil {
			// The renderer's own YAML failing to parse is a bug; refuse the
			// whole output rather than emit part of it.
			return nil, append(diagnostics, cfg.result("", fmt.Sprintf("internal error: rendered %s %s does not parse: %v", obj.Kind(), obj.Name(), err)))
		}
		items = append(items, node)
	}
	return items, diagnostics
}

// source reads the agreement from spec.file inside g.Dir, or takes it inline.
func (g Generator) source(cfg *Config) (generator.Source, *framework.Result) {
	if cfg.Spec.Agreement != "" {
		return generator.Source{Path: inlinePath, Data: []byte(cfg.Spec.Agreement)}, nil
	}
	src, err := generator.ReadFileIn(g.Dir, cfg.Spec.File)
	switch {
	case err == nil:
		return src, nil
	case errors.Is(err, generator.ErrOutsideRoot):
		return src, cfg.result("spec.file", fmt.Sprintf("%q is outside the kustomization directory: use a relative path without ../ that stays inside it", cfg.Spec.File))
	case errors.Is(err, fs.ErrNotExist):
		return src, cfg.result("spec.file", fmt.Sprintf("%q: no such file in the kustomization directory", cfg.Spec.File))
	}
	return src, cfg.result("spec.file", err.Error())
}

// passThrough keeps the input items except the functionConfig, which
// kustomize hands a generator as its only item (marked local-config): it is
// configuration, not a resource to emit.
func passThrough(in []*yaml.RNode, cfg *Config) []*yaml.RNode {
	var out []*yaml.RNode
	for _, item := range in {
		meta, err := item.GetMeta()
		if err == nil && meta.APIVersion == cfg.Ref.APIVersion && meta.Kind == cfg.Ref.Kind &&
			meta.Name == cfg.Ref.Name && meta.Namespace == cfg.Ref.Namespace {
			continue
		}
		out = append(out, item)
	}
	return out
}

// Run executes the function: it reads a ResourceList from in and writes one to
// out, only after everything has succeeded or failed, never in between. The
// returned results (warnings and errors) are for the caller to print: kustomize
// shows a function's stderr but not its results. err is non-nil when the
// function failed; it is framework.Results when the failure is described by
// results.
func Run(dir string, in io.Reader, out io.Writer) (framework.Results, error) {
	input, err := io.ReadAll(io.LimitReader(in, MaxInputSize+1))
	if err != nil {
		return writeFailure(out, failure(fmt.Sprintf("read ResourceList: %v", err)))
	}
	if len(input) > MaxInputSize {
		return writeFailure(out, failure(ErrInputTooLarge.Error()))
	}

	var buf bytes.Buffer
	var got framework.Results
	processor := framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		err := Generator{Dir: dir}.Process(rl)
		got = rl.Results
		return err
	})
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input), Writer: &buf, KeepReaderAnnotations: true}
	err = framework.Execute(processor, rw)
	if err != nil {
		var rs framework.Results
		switch {
		case !errors.As(err, &rs):
			// The input could not be read, or the framework failed around
			// the processor: buf holds nothing usable, so say why in a
			// ResourceList of our own.
			return writeFailure(out, append(got, &framework.Result{Severity: framework.Error, Message: err.Error()}))
		case rw.WrappingKind != kio.ResourceListKind:
			// The input was empty or a bare YAML stream: the framework wrote
			// the (empty) items unwrapped, with nowhere to put the results.
			return writeFailure(out, got)
		}
	}
	// On a failure the processor emptied the items: buf holds the results only.
	if _, werr := out.Write(buf.Bytes()); werr != nil {
		return got, fmt.Errorf("write ResourceList: %w", werr)
	}
	return got, err
}

// writeFailure writes a ResourceList holding results and no items.
func writeFailure(out io.Writer, rs framework.Results) (framework.Results, error) {
	b, err := yaml.Marshal(map[string]any{
		"apiVersion": kio.ResourceListAPIVersion,
		"kind":       kio.ResourceListKind,
		"items":      []any{},
		"results":    rs,
	})
	if err != nil {
		return rs, err
	}
	if _, err := out.Write(b); err != nil {
		return rs, fmt.Errorf("write ResourceList: %w", err)
	}
	return rs, rs
}

func failure(msg string) framework.Results {
	return framework.Results{{Severity: framework.Error, Message: msg}}
}
