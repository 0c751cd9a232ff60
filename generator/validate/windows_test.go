package validate_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
)

// inference is a team of the header's one flavor with one window header
// after it: lines 5-9 (the window's table at line 8).
const inference = header + `[teams.inference]
guaranteed = 8
reclaim = "preempt"
[[teams.inference.windows]]
`

func TestWindowProblems(t *testing.T) {
	tests := map[string]problemCase{
		"the issue's window is valid": {
			src: inference + `days = ["Mon", "Tue", "Wed", "Thu", "Fri"]
from = "20:00"
to = "06:00"
timezone = "Europe/Berlin"
lendable = 6
[teams.research]
guaranteed = 8
borrow = 6
`,
		},
		"day names in any case": {
			src: inference + `days = ["mon", "TUE", "Wed"]
from = "20:00"
to = "06:00"
lendable = 6
`,
		},
		"a day twice in two cases": {
			src: inference + `days = ["Mon", "mon"]
from = "20:00"
to = "06:00"
lendable = 6
`,
			want: diag.List{errAt(9, 16, "teams.inference.windows[0].days[1]", field.ErrorTypeDuplicate)},
		},
		"two windows that touch do not overlap": {
			src: inference + `from = "20:00"
to = "06:00"
lendable = 6
[[teams.inference.windows]]
from = "06:00"
to = "08:00"
lendable = 2
`,
		},
		"every problem at its line, at once": {
			src: inference + `days = ["Mon", "Moon", "Mon"]
from = "8:00"
to = "25:00"
timezone = "Europe/Berln"
lendable = 9
borrow = -1
`,
			want: diag.List{
				errAt(9, 16, "teams.inference.windows[0].days[1]", field.ErrorTypeNotSupported),
				errAt(9, 24, "teams.inference.windows[0].days[2]", field.ErrorTypeDuplicate),
				errAt(10, 8, "teams.inference.windows[0].from", field.ErrorTypeInvalid),
				errAt(11, 6, "teams.inference.windows[0].to", field.ErrorTypeInvalid),
				errAt(12, 12, "teams.inference.windows[0].timezone", field.ErrorTypeNotFound),
				errAt(13, 12, "teams.inference.windows[0].lendable", field.ErrorTypeInvalid),
				errAt(14, 10, "teams.inference.windows[0].borrow", field.ErrorTypeInvalid),
			},
		},
		"from and to are required, and must differ": {
			src: inference + `lendable = 1
[[teams.inference.windows]]
from = "10:00"
to = "10:00"
lendable = 1
`,
			want: diag.List{
				errAt(8, 19, "teams.inference.windows[0].from", field.ErrorTypeRequired),
				errAt(8, 19, "teams.inference.windows[0].to", field.ErrorTypeRequired),
				errAt(12, 6, "teams.inference.windows[1].to", field.ErrorTypeInvalid),
			},
		},
		"a window wrapping past midnight overlaps the next morning's": {
			src: inference + `days = ["Fri"]
from = "20:00"
to = "06:00"
lendable = 6
[[teams.inference.windows]]
days = ["Sat"]
from = "05:00"
to = "07:00"
lendable = 2
`,
			want: diag.List{errAt(15, 8, "teams.inference.windows[1]", field.ErrorTypeDuplicate)},
		},
		"Sunday's window wraps into Monday's": {
			src: inference + `days = ["Sun"]
from = "22:00"
to = "02:00"
lendable = 6
[[teams.inference.windows]]
days = ["Mon"]
from = "01:00"
to = "03:00"
lendable = 2
`,
			want: diag.List{errAt(15, 8, "teams.inference.windows[1]", field.ErrorTypeDuplicate)},
		},
		"windows of one team in two zones are refused": {
			src: inference + `from = "20:00"
to = "06:00"
timezone = "Europe/Berlin"
lendable = 6
[[teams.inference.windows]]
from = "08:00"
to = "09:00"
timezone = "America/New_York"
lendable = 2
`,
			want: diag.List{errAt(16, 12, "teams.inference.windows[1].timezone", field.ErrorTypeInvalid)},
		},
		"several flavors: per flavor, lendable within each guarantee": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[flavors.a100]
capacity = 16
[teams.inference.flavors.h100]
guaranteed = 8
[[teams.inference.windows]]
from = "20:00"
to = "06:00"
lendable = 1
[teams.inference.windows.flavors.h100]
lendable = 6
[teams.inference.windows.flavors.a100]
lendable = 1
[teams.inference.windows.flavors.l4]
borrow = 1
`,
			want: diag.List{
				errAt(12, 12, "teams.inference.windows[0].lendable", field.ErrorTypeForbidden),
				errAt(16, 12, "teams.inference.windows[0].flavors.a100.lendable", field.ErrorTypeInvalid),
				errAt(17, 34, "teams.inference.windows[0].flavors.l4", field.ErrorTypeNotFound),
			},
		},
		"unknown keys and a window that changes nothing": {
			src: inference + `from = "20:00"
to = "06:00"
guaranteed = 4
`,
			want: diag.List{
				warnAt(8, 19, "teams.inference.windows[0]", field.ErrorTypeRequired),
				errAt(11, 1, "teams.inference.windows[0].guaranteed", field.ErrorTypeNotSupported),
			},
		},
		"windows must be an array of tables": {
			src:  header + "[teams.inference]\nguaranteed = 8\nwindows = 3\n",
			want: diag.List{errAt(7, 11, "teams.inference.windows", field.ErrorTypeTypeInvalid)},
		},
	}
	checkProblems(t, tests)
}

func TestWindowMessages(t *testing.T) {
	tests := map[string]messageCase{
		"an overlap names the other window and the day": {
			src:  inference + "days = [\"Fri\"]\nfrom = \"20:00\"\nto = \"06:00\"\nlendable = 6\n[[teams.inference.windows]]\ndays = [\"Sat\"]\nfrom = \"05:00\"\nto = \"07:00\"\nlendable = 2\n",
			want: `tenancy.toml:15:8: teams.inference.windows[1]: overlaps the team's window at line 8 (20:00 to 06:00 UTC on Fri) on Fri: windows of one team must not overlap, which values would apply?`,
		},
		"an unknown zone": {
			src:  inference + "from = \"20:00\"\nto = \"06:00\"\ntimezone = \"Berlin\"\nlendable = 6\n",
			want: `tenancy.toml:11:12: teams.inference.windows[0].timezone: unknown time zone "Berlin": name an IANA zone such as "Europe/Berlin" or "UTC"`,
		},
		"lendable over the guarantee": {
			src:  inference + "from = \"20:00\"\nto = \"06:00\"\nlendable = 9\n",
			want: `tenancy.toml:11:12: teams.inference.windows[0].lendable: lendable (9) exceeds the team's guaranteed 8 of flavor h100: inside a window, too, a team can only lend GPUs it is guaranteed`,
		},
	}
	checkMessages(t, tests)
}
