package generator_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
)

// TestTOMLRefusalIsTheAnswer holds that bytes go-toml's decoder refuses
// are refused with its one diagnostic, by every entry point, though the
// steps after loading run on the loader's tree while the decoder judges
// (load.Start): whether that tree makes a valid agreement (the first
// cases) or a broken one, nothing of it is said.
func TestTOMLRefusalIsTheAnswer(t *testing.T) {
	tests := map[string]struct {
		src  string
		want []string
	}{
		"a valid agreement in a table that dotted keys defined, reopened by a header": {
			src:  "version = 1\nname = \"pool\"\n[flavors]\nh100.capacity = 8\n[flavors.h100]\nresource = \"nvidia.com/gpu\"\n[teams.a]\nguaranteed = 8\n",
			want: []string{"tenancy.toml:5:2: invalid TOML: table h100 already exists as defined by a dotted key"},
		},
		"a fleet whose parts the tree would list": {
			src:  "version = 1\nname = \"pool\"\nbackend = \"kueue\"\n[flavors.h100]\ncapacity = 16\n[clusters]\neast.kubeconfig_secret = \"east\"\n[clusters.east]\nflavors.h100 = 8\n[clusters.west]\nkubeconfig_secret = \"west\"\nflavors.h100 = 8\n[teams.a]\nguaranteed = 8\n",
			want: []string{"tenancy.toml:8:2: invalid TOML: table east already exists as defined by a dotted key"},
		},
		"a broken agreement": {
			src:  "a.b.c = 1\n[a.b]\n",
			want: []string{"tenancy.toml:2:2: invalid TOML: table b already exists as defined by a dotted key"},
		},
	}
	strs := func(err error) []string {
		ae, ok := err.(*generator.AgreementError)
		if !ok {
			t.Fatalf("error %v (%T), want an *AgreementError", err, err)
		}
		var out []string
		for _, d := range ae.Diagnostics {
			out = append(out, d.String())
		}
		return out
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := generator.Source{Path: "tenancy.toml", Data: []byte(tc.src)}
			calls := map[string]func() error{
				"Render":   func() error { _, err := generator.Render(src, generator.Options{}); return err },
				"Check":    func() error { _, _, err := generator.Check(src, generator.Options{}); return err },
				"CheckAll": func() error { _, _, err := generator.CheckAll(src, generator.Options{}); return err },
				"CheckAll kai": func() error {
					_, _, err := generator.CheckAll(src, generator.Options{Backend: generator.KAI})
					return err
				},
				"Parts":            func() error { _, err := generator.Parts(src); return err },
				"Prepared.Parts":   func() error { _, err := generator.Prepare(src).Parts(); return err },
				"Prepared.Render":  func() error { _, err := generator.Prepare(src).Render(generator.Options{}); return err },
				"Render --cluster": func() error { _, err := generator.Render(src, generator.Options{Cluster: "east"}); return err },
			}
			for call, f := range calls {
				if diff := cmp.Diff(tc.want, strs(f())); diff != "" {
					t.Errorf("%s (-want,+got):\n%s", call, diff)
				}
			}
		})
	}
}
