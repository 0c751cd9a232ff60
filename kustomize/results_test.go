package kustomize

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

func TestRenderFailureResults(t *testing.T) {
	ref := yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{APIVersion: APIVersion, Kind: Kind},
		NameMeta: yaml.NameMeta{Name: "gpu-tenancy"},
	}
	lendable := diag.Diagnostic{
		Severity: diag.Error, File: "tenancy.toml", Pos: diag.Pos{Line: 12, Column: 3},
		Path: field.NewPath("teams.training.lendable"), Message: "exceeds guaranteed (16)",
	}
	kaiWarning := diag.Diagnostic{
		Severity: diag.Warning, File: "tenancy.toml", Pos: diag.Pos{Line: 20, Column: 1},
		Path: field.NewPath("teams.research.borrow"), Message: "KAI cannot cap borrowing exactly",
	}
	syntax := diag.Diagnostic{Severity: diag.Error, File: "tenancy.toml", Pos: diag.Pos{Line: 4, Column: 9}, Message: "expected a value"}

	tests := map[string]struct {
		spec Spec
		path string // the TenancyGenerator's file, when kustomize says
		err  error
		want framework.Results
	}{
		"file agreement: file, field and line": {
			spec: Spec{File: "tenancy.toml"},
			err:  &generator.AgreementError{Diagnostics: diag.List{lendable, kaiWarning}},
			want: framework.Results{
				{
					Severity: framework.Error,
					Message:  "tenancy.toml:12:3: teams.training.lendable: exceeds guaranteed (16)",
					File:     &framework.File{Path: "tenancy.toml"},
					Field:    &framework.Field{Path: "teams.training.lendable"},
				},
				{
					Severity: framework.Warning,
					Message:  "tenancy.toml:20:1: warning: teams.research.borrow: KAI cannot cap borrowing exactly",
					File:     &framework.File{Path: "tenancy.toml"},
					Field:    &framework.Field{Path: "teams.research.borrow"},
				},
			},
		},
		"file-level problem has no field": {
			spec: Spec{File: "tenancy.toml"},
			err:  &generator.AgreementError{Diagnostics: diag.List{syntax}},
			want: framework.Results{{
				Severity: framework.Error,
				Message:  "tenancy.toml:4:9: expected a value",
				File:     &framework.File{Path: "tenancy.toml"},
			}},
		},
		"inline agreement points at the TenancyGenerator": {
			spec: Spec{Agreement: "version = 1\n"},
			path: "tenancy-generator.yaml",
			err: &generator.AgreementError{Diagnostics: diag.List{{
				Severity: diag.Error, File: inlinePath, Pos: diag.Pos{Line: 2, Column: 1},
				Path: field.NewPath("name"), Message: "is required",
			}}},
			want: framework.Results{{
				Severity:    framework.Error,
				Message:     "TenancyGenerator/gpu-tenancy: spec.agreement:2:1: name: is required",
				ResourceRef: &ref,
				File:        &framework.File{Path: "tenancy-generator.yaml"},
				Field:       &framework.Field{Path: inlinePath},
			}},
		},
		"an agreement error of warnings alone still fails": {
			spec: Spec{File: "tenancy.toml"},
			err:  &generator.AgreementError{Diagnostics: diag.List{kaiWarning}},
			want: framework.Results{
				{
					Severity: framework.Warning,
					Message:  "tenancy.toml:20:1: warning: teams.research.borrow: KAI cannot cap borrowing exactly",
					File:     &framework.File{Path: "tenancy.toml"},
					Field:    &framework.Field{Path: "teams.research.borrow"},
				},
				{
					Severity:    framework.Error,
					Message:     "TenancyGenerator/gpu-tenancy: invalid agreement",
					ResourceRef: &ref,
				},
			},
		},
		"any other error": {
			spec: Spec{File: "tenancy.toml"},
			err:  fmt.Errorf("render: %w", os.ErrInvalid),
			want: framework.Results{{
				Severity:    framework.Error,
				Message:     "TenancyGenerator/gpu-tenancy: render: invalid argument",
				ResourceRef: &ref,
			}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := &Config{Ref: ref, Path: tc.path, Spec: tc.spec}
			got := renderFailure(cfg, tc.err)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("renderFailure() (-want,+got):\n%s", diff)
			}
			if got.ExitCode() == 0 {
				t.Errorf("renderFailure() results do not fail the function")
			}
		})
	}
}

// TestSymlinkOutOfDirectoryRefused checks spec.file cannot leave the
// kustomization through a symlink, which a path check alone would miss.
func TestSymlinkOutOfDirectoryRefused(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "tenancy.toml")
	if err := os.WriteFile(secret, []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(dir, "tenancy.toml")); err != nil {
		t.Skipf("symlinks unsupported: %v", err)
	}
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n" +
		"  apiVersion: tenancy.dev/v1alpha1\n  kind: TenancyGenerator\n  metadata:\n    name: gpu-tenancy\n" +
		"  spec:\n    file: tenancy.toml\n"
	var out strings.Builder
	results, err := Run(dir, strings.NewReader(in), &out)
	if err == nil {
		t.Fatalf("Run() succeeded through a symlink leaving the directory; output:\n%s", out.String())
	}
	want := framework.Results{{
		Severity:    framework.Error,
		Message:     `TenancyGenerator/gpu-tenancy: spec.file: "tenancy.toml" is outside the kustomization directory: use a relative path without ../ that stays inside it`,
		ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: APIVersion, Kind: Kind}, NameMeta: yaml.NameMeta{Name: "gpu-tenancy"}},
		Field:       &framework.Field{Path: "spec.file"},
	}}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want,+got):\n%s", diff)
	}
	assertItemsEmpty(t, []byte(out.String()))
}

func TestInputTooLarge(t *testing.T) {
	in := strings.NewReader(strings.Repeat("#", MaxInputSize+1))
	var out strings.Builder
	results, err := Run(t.TempDir(), in, &out)
	if err == nil {
		t.Fatal("Run() accepted input over MaxInputSize")
	}
	want := framework.Results{{Severity: framework.Error, Message: ErrInputTooLarge.Error()}}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want,+got):\n%s", diff)
	}
	assertItemsEmpty(t, []byte(out.String()))
}

func TestAgreementTooLarge(t *testing.T) {
	dir := t.TempDir()
	big := "# padding\n" + strings.Repeat("#", generator.MaxAgreementSize)
	if err := os.WriteFile(filepath.Join(dir, "tenancy.toml"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		spec string
		want string
	}{
		"file":   {spec: "file: tenancy.toml", want: "TenancyGenerator/gpu-tenancy: spec.file: tenancy.toml: agreement exceeds 1 MiB"},
		"inline": {spec: "agreement: '" + big + "'", want: "TenancyGenerator/gpu-tenancy: spec.agreement: agreement exceeds 1 MiB"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n" +
				"  apiVersion: tenancy.dev/v1alpha1\n  kind: TenancyGenerator\n  metadata:\n    name: gpu-tenancy\n" +
				"  spec:\n    " + tc.spec + "\n"
			var out strings.Builder
			results, err := Run(dir, strings.NewReader(in), &out)
			if err == nil {
				t.Fatal("Run() accepted an agreement over generator.MaxAgreementSize")
			}
			var got []string
			for _, r := range results {
				got = append(got, r.Message)
			}
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("result messages (-want,+got):\n%s", diff)
			}
			assertItemsEmpty(t, []byte(out.String()))
		})
	}
}
