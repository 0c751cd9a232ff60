package validate_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
)

// checkFleet returns every diagnostic tenancy check reports on a fleet: the
// agreement's rules and the split's, every part checked (CheckAll).
func checkFleet(t *testing.T, src string) diag.List {
	t.Helper()
	_, warnings, err := generator.CheckAll(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{Backend: generator.Kueue})
	return diagnostics(t, warnings, err)
}

// fleetHeader is a pool of 32 H100s in two workers of 16 under a manager;
// its lines 1-10.
const fleetHeader = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[clusters.hub]
manager = true
[clusters.east]
flavors = { h100 = 16 }
[clusters.west]
flavors = { h100 = 16 }
`

// TestClusterProblems: what check refuses of a fleet, and warns about, at
// the line and key that cause it.
func TestClusterProblems(t *testing.T) {
	e := func(line, col int, path string, typ field.ErrorType) diag.Diagnostic {
		return diagtest.Error("tenancy.toml", line, col, path, typ)
	}
	w := func(line, col int, path string, typ field.ErrorType) diag.Diagnostic {
		return diagtest.Warning("tenancy.toml", line, col, path, typ)
	}
	tests := map[string]struct {
		src  string
		want diag.List
	}{
		"each guarantee whole in one cluster is valid": {src: fleetHeader + `[teams.a]
guaranteed = 16
clusters = { east = 16 }
[teams.b.clusters.west]
guaranteed = 8
lendable = 4
[teams.b]
guaranteed = 8
lendable = 4
`},
		"a default split warns: no gang of the whole guarantee": {src: fleetHeader + `[teams.a]
guaranteed = 16
`, want: diag.List{w(12, 14, "teams.a.guaranteed", field.ErrorTypeInvalid)}},
		"capacity that is not the workers' total": {src: `version = 1
name = "p"
[flavors.h100]
capacity = 30
[clusters.east]
flavors = { h100 = 16 }
[clusters.west]
flavors = { h100 = 16 }
[teams.a]
`, want: diag.List{e(4, 12, "flavors.h100.capacity", field.ErrorTypeInvalid)}},
		"shares that do not add up, and an unknown cluster": {src: fleetHeader + `[teams.a]
guaranteed = 16
clusters = { east = 10, north = 6 }
`, want: diag.List{
			e(13, 14, "teams.a.clusters", field.ErrorTypeInvalid),
			e(13, 25, "teams.a.clusters.north", field.ErrorTypeNotFound),
		}},
		"a worker guaranteed more than it has": {src: fleetHeader + `[teams.a]
guaranteed = 16
clusters = { east = 16 }
[teams.b]
guaranteed = 8
clusters = { east = 8 }
`, want: diag.List{e(8, 20, "clusters.east.flavors.h100", field.ErrorTypeInvalid)}},
		"two managers, a manager with GPUs": {src: `version = 1
name = "p"
[flavors.h100]
capacity = 16
[clusters.hub]
manager = true
flavors = { h100 = 0 }
[clusters.boss]
manager = true
[clusters.east]
flavors = { h100 = 16 }
[teams.a]
`, want: diag.List{
			e(7, 11, "clusters.hub.flavors", field.ErrorTypeForbidden),
			e(9, 11, "clusters.boss.manager", field.ErrorTypeDuplicate),
		}},
		"a dispatcher names a user, and only a worker has one": {src: `version = 1
name = "p"
[flavors.h100]
capacity = 16
[clusters.hub]
manager = true
dispatcher = "system:serviceaccount:kueue-system:multikueue-sa"
[clusters.east]
flavors = { h100 = 8 }
dispatcher = "multikueue sa"
[clusters.west]
flavors = { h100 = 8 }
dispatcher = "system:serviceaccount:kueue-system:west"
[teams.a]
`, want: diag.List{
			e(7, 14, "clusters.hub.dispatcher", field.ErrorTypeForbidden),
			e(10, 14, "clusters.east.dispatcher", field.ErrorTypeInvalid),
		}},
		"lendable and borrow per cluster": {src: fleetHeader + `[teams.a]
guaranteed = 16
lendable = 4
borrow = 2
[teams.a.clusters.east]
guaranteed = 16
lendable = 6
borrow = 4
[teams.a.clusters.west]
guaranteed = 0
lendable = 1
`, want: diag.List{
			w(14, 10, "teams.a.borrow", field.ErrorTypeInvalid), // nobody lends
			e(15, 19, "teams.a.clusters", field.ErrorTypeInvalid),
			e(18, 10, "teams.a.clusters.east.borrow", field.ErrorTypeInvalid),
			e(21, 12, "teams.a.clusters.west.lendable", field.ErrorTypeInvalid),
		}},
		"values of the wrong type, and a misspelt key": {src: fleetHeader + `[clusters.north]
flavors = 4
manager = "yes"
flavor = {}
[teams.a]
guaranteed = 16
clusters = { east = "all", west = { guaranteed = 0, lendible = 1 } }
`, want: diag.List{
			e(12, 11, "clusters.north.flavors", field.ErrorTypeTypeInvalid),
			e(13, 11, "clusters.north.manager", field.ErrorTypeTypeInvalid),
			e(14, 1, "clusters.north.flavor", field.ErrorTypeNotSupported),
			e(17, 14, "teams.a.clusters", field.ErrorTypeInvalid),
			e(17, 21, "teams.a.clusters.east", field.ErrorTypeTypeInvalid),
			e(17, 53, "teams.a.clusters.west.lendible", field.ErrorTypeNotSupported),
		}},
		"clusters without [clusters]": {src: `version = 1
name = "p"
[flavors.h100]
capacity = 16
[teams.a]
guaranteed = 16
clusters = { east = 16 }
`, want: diag.List{e(5, 8, "teams.a.clusters", field.ErrorTypeForbidden)}},
		"windows with clusters": {src: fleetHeader + `[teams.a]
guaranteed = 16
clusters = { east = 16 }
[[teams.a.windows]]
from = "20:00"
to = "06:00"
lendable = 0
`, want: diag.List{e(14, 11, "teams.a.windows[0]", field.ErrorTypeForbidden)}},
		"a department split past its teams in one cluster": {src: fleetHeader + `[departments.d]
guaranteed = 16
[teams.a]
department = "d"
guaranteed = 16
clusters = { east = 16 }
`, want: diag.List{
			e(11, 14, "departments.d", field.ErrorTypeInvalid),
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := diagtest.Diff(t, tc.want, checkFleet(t, tc.src)); diff != "" {
				t.Errorf("diagnostics (-want,+got):\n%s", diff)
			}
		})
	}
}
