package validate_test

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
)

func TestMonitoringProblems(t *testing.T) {
	tests := map[string]struct {
		src  string
		want diag.List
	}{
		"valid, with defaults": {
			src: "[monitoring]\nenabled = true\n",
		},
		"every problem": {
			src: `[monitoring]
enabled = "yes"
namespace = "Monitoring"
rule_labels = { "bad key!" = "x", release = "not a value!" }
currency = ""
owner_waiting_minutes = 0
squatting_utilization = 150
squatting_hours = 200
colour = "blue"
[monitoring.prices]
h100 = -1
a100 = 3
`,
			want: diag.List{
				errAt(8, 11, "monitoring.enabled", field.ErrorTypeTypeInvalid),
				errAt(9, 13, "monitoring.namespace", field.ErrorTypeInvalid),
				errAt(10, 17, "monitoring.rule_labels[bad key!]", field.ErrorTypeInvalid),
				errAt(10, 35, "monitoring.rule_labels.release", field.ErrorTypeInvalid),
				errAt(11, 12, "monitoring.currency", field.ErrorTypeRequired),
				errAt(12, 25, "monitoring.owner_waiting_minutes", field.ErrorTypeInvalid),
				errAt(13, 25, "monitoring.squatting_utilization", field.ErrorTypeInvalid),
				errAt(14, 19, "monitoring.squatting_hours", field.ErrorTypeInvalid),
				errAt(15, 1, "monitoring.colour", field.ErrorTypeNotSupported),
				errAt(17, 8, "monitoring.prices.h100", field.ErrorTypeInvalid),
				errAt(18, 1, "monitoring.prices.a100", field.ErrorTypeNotFound),
			},
		},
		"a price for a string": {
			src:  "[monitoring.prices]\nh100 = \"2.5\"\n",
			want: diag.List{errAt(8, 8, "monitoring.prices.h100", field.ErrorTypeTypeInvalid)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := header + "[teams.a]\nguaranteed = 8\n" + tc.src
			_, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{})
			var got diag.List
			var aerr *generator.AgreementError
			if errors.As(err, &aerr) {
				got = aerr.Diagnostics.Errors()
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := diagtest.Diff(t, tc.want, got); diff != "" {
				t.Errorf("diagnostics (-want,+got):\n%s", diff)
			}
		})
	}
}
