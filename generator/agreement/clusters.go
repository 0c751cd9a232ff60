package agreement

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/load"
)

// Keys of a [clusters.NAME] table and of a cluster's share in a team's or
// a department's clusters table (the full form; the shorthand is a number,
// the guarantee).
var (
	clusterKeys      = []string{"manager", "flavors", "kubeconfig_secret", "dispatcher"}
	clusterShareKeys = []string{"guaranteed", "lendable", "borrow"}
)

// DefaultManager names the manager's part of a fleet whose [clusters] names
// no manager.
const DefaultManager = "manager"

// DefaultDispatcher is the user the manager's MultiKueue acts as in a
// worker: the service account of Kueue's own kubeconfig script
// (site/static/examples/multikueue/create-multikueue-kubeconfig.sh), which
// README's recipe for the worker's Secret creates.
const DefaultDispatcher = "system:serviceaccount:kueue-system:multikueue-sa"

// Cluster is a [clusters.NAME] table: the manager (manager = true; it has no
// GPUs of its own, it admits and dispatches) or a worker cluster with its
// GPUs per flavor.
type Cluster struct {
	Name    string
	Pos     Pos
	Path    *field.Path
	Manager Bool
	// Flavors are the worker's GPUs per flavor, in the file's order; each
	// Int's Pos is the value's.
	Flavors []ClusterFlavor
	// FlavorsPos is the flavors key's value, of whatever type; zero when
	// absent.
	FlavorsPos Pos
	// KubeconfigSecret names the Secret (key "kubeconfig") in Kueue's
	// namespace on the manager that reaches this worker; Defaulted to the
	// cluster's name.
	KubeconfigSecret Str
	// Dispatcher is the user of that kubeconfig in the worker: the only
	// requester, besides the trusted controllers, that the worker's
	// guardrails let create GPU work there. Defaulted to
	// DefaultDispatcher.
	Dispatcher Str
}

// ClusterFlavor is one entry of a cluster's flavors table.
type ClusterFlavor struct {
	Flavor string
	GPUs   Int
}

// ClusterShare is one entry of a team's or a department's clusters table:
// its guarantee in that cluster (the shorthand, a number: Guaranteed only),
// or a table of guaranteed, lendable and borrow there.
type ClusterShare struct {
	Cluster    string
	Pos        Pos // the entry's key
	Path       *field.Path
	Guaranteed Int
	Lendable   Int
	Borrow     Int
}

// Cluster returns the named cluster, or nil.
func (a *Agreement) Cluster(name string) *Cluster {
	return named(a.Clusters, name, func(c *Cluster) string { return c.Name })
}

// clusters decodes the [clusters] table.
func (d *decoder) clusters(v *load.Value) []*Cluster {
	path := field.NewPath("clusters")
	if d.table(v, path) == nil {
		return nil
	}
	var out []*Cluster
	for _, name := range v.Table.Keys {
		cv := v.Table.Get(name)
		cpath := diag.Key(path, name)
		if d.table(cv, cpath) == nil {
			continue
		}
		t := cv.Table
		d.unknown(t, cpath, clusterKeys)
		c := &Cluster{Name: name, Pos: cv.KeyPos, Path: cpath}
		c.Manager = d.bool(t.Get("manager"), cpath.Child("manager"))
		c.KubeconfigSecret = d.str(t.Get("kubeconfig_secret"), cpath.Child("kubeconfig_secret"))
		c.Dispatcher = d.str(t.Get("dispatcher"), cpath.Child("dispatcher"))
		fpath := cpath.Child("flavors")
		if fv := t.Get("flavors"); fv != nil {
			c.FlavorsPos = fv.Pos
		}
		if fv := d.table(t.Get("flavors"), fpath); fv != nil {
			for _, f := range fv.Table.Keys {
				n := d.int(fv.Table.Get(f), diag.Key(fpath, f))
				c.Flavors = append(c.Flavors, ClusterFlavor{Flavor: f, GPUs: n})
			}
		}
		out = append(out, c)
	}
	return out
}

// clusterShares decodes a team's or a department's clusters key: a table
// whose entries are a number (the guarantee there) or a table (guaranteed,
// lendable, borrow there). Written but empty is not nil.
func (d *decoder) clusterShares(v *load.Value, path *field.Path) []*ClusterShare {
	if d.table(v, path) == nil {
		return nil
	}
	out := []*ClusterShare{}
	for _, name := range v.Table.Keys {
		sv := v.Table.Get(name)
		spath := diag.Key(path, name)
		s := &ClusterShare{Cluster: name, Pos: sv.KeyPos, Path: spath,
			Guaranteed: Int{Path: spath.Child("guaranteed")}, Lendable: Int{Path: spath.Child("lendable")}, Borrow: Int{Path: spath.Child("borrow")}}
		if sv.Kind == load.Table {
			d.unknown(sv.Table, spath, clusterShareKeys)
			s.Guaranteed = d.int(sv.Table.Get("guaranteed"), spath.Child("guaranteed"))
			s.Lendable = d.int(sv.Table.Get("lendable"), spath.Child("lendable"))
			s.Borrow = d.int(sv.Table.Get("borrow"), spath.Child("borrow"))
		} else {
			s.Guaranteed = d.int(sv, spath)
		}
		out = append(out, s)
	}
	return out
}

// defaultClusters names each worker's kubeconfig Secret after the worker,
// and its dispatcher Kueue's service account, when the agreement does not.
func defaultClusters(a *Agreement) {
	for _, c := range a.Clusters {
		if c.KubeconfigSecret.State == Unset {
			c.KubeconfigSecret = Str{Value: c.Name, State: Defaulted, Pos: c.Pos, Path: c.KubeconfigSecret.Path}
		}
		if c.Dispatcher.State == Unset {
			c.Dispatcher = Str{Value: DefaultDispatcher, State: Defaulted, Pos: c.Pos, Path: c.Dispatcher.Path}
		}
	}
}
