package validate

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
)

// clusters checks a fleet's [clusters] and every clusters key of the teams
// and departments: one manager at most, with no GPUs; workers with GPUs of
// known flavors that add up, per flavor, to the flavor's capacity; shares
// that name workers and add up to what they split. Whether each worker can
// hold the split (the default one included) is plan.CheckFleet's, on the
// plan that computes it. Lending windows are refused with clusters: their
// controller patches one cluster's ClusterQueues, and a fleet's would need
// every part patched in step.
func (v *validator) clusters() {
	a := v.a
	if len(a.Clusters) == 0 {
		v.sharesWithoutClusters()
		return
	}
	var manager *agreement.Cluster
	workers := map[string]bool{}
	var names []string
	for _, c := range a.Clusters {
		v.dnsLabel(c.Pos, c.Path, c.Name)
		if c.Manager.Value {
			if manager != nil {
				v.errorf(field.ErrorTypeDuplicate, c.Manager.Pos, c.Manager.Path, "cluster %q is the fleet's manager already (line %d): a fleet has one manager", manager.Name, manager.Pos.Line)
				continue
			}
			manager = c
			if c.FlavorsPos.Line > 0 {
				v.errorf(field.ErrorTypeForbidden, c.FlavorsPos, c.Path.Child("flavors"), "the manager has no GPUs of its own: it admits jobs against the fleet's quotas and dispatches them to the workers; list GPUs on the workers")
			}
			if c.KubeconfigSecret.IsSet() {
				v.errorf(field.ErrorTypeForbidden, c.KubeconfigSecret.Pos, c.KubeconfigSecret.Path, "the manager is reached by no kubeconfig Secret: it holds the workers' Secrets")
			}
			if c.Dispatcher.IsSet() {
				v.errorf(field.ErrorTypeForbidden, c.Dispatcher.Pos, c.Dispatcher.Path, "the manager has no dispatcher: it is the dispatcher, acting in each worker as that worker's dispatcher")
			}
			continue
		}
		workers[c.Name] = true
		names = append(names, c.Name)
		if c.Name == agreement.DefaultManager && !v.hasManager() {
			v.errorf(field.ErrorTypeDuplicate, c.Pos, c.Path, "a worker named %q takes the name of the manager's part, which no cluster names: rename the worker, or name the manager with manager = true", c.Name)
		}
		if c.FlavorsPos.Line == 0 {
			v.errorf(field.ErrorTypeRequired, c.Pos, c.Path.Child("flavors"), "a worker lists its GPUs per flavor")
			v.suggest("[clusters.%s]\nflavors = { %s = 8 }", c.Name, v.teamFlavor(nil))
		}
		if c.KubeconfigSecret.IsSet() {
			v.dnsLabel(c.KubeconfigSecret.Pos, c.KubeconfigSecret.Path, c.KubeconfigSecret.Value)
		}
		if c.Dispatcher.IsSet() {
			v.userName(c.Dispatcher, "a dispatcher")
		}
		for _, f := range c.Flavors {
			path := f.GPUs.Path
			if a.Flavor(f.Flavor) == nil {
				v.errorf(field.ErrorTypeNotFound, f.GPUs.Pos, path, "unknown flavor %q (flavors: %s)", f.Flavor, v.flavorNames())
			}
			if f.GPUs.IsSet() && f.GPUs.Value < 0 {
				v.errorf(field.ErrorTypeInvalid, f.GPUs.Pos, path, "must not be negative, got %d", f.GPUs.Value)
			}
			v.count(f.GPUs)
		}
	}
	if len(workers) == 0 {
		v.errorf(field.ErrorTypeRequired, a.ClustersPos, field.NewPath("clusters"), "a fleet needs at least one worker cluster, with its GPUs per flavor")
		return
	}
	v.fleetCapacity(names)
	for _, t := range a.Teams {
		v.shares("team", t.ByFlavor, workers)
		for _, w := range t.Windows {
			v.errorf(field.ErrorTypeForbidden, w.Pos, w.Path, "lending windows are not supported with [clusters] yet: the windows controller patches one cluster's queues, and a fleet's manager and workers would have to change in step")
		}
	}
	for _, d := range a.Departments {
		v.shares("department", d.ByFlavor, workers)
	}
}

func (v *validator) hasManager() bool {
	for _, c := range v.a.Clusters {
		if c.Manager.Value {
			return true
		}
	}
	return false
}

// fleetCapacity reports flavors whose workers' GPUs do not add up to the
// flavor's capacity: the manager's quotas are the flavor's, and they must
// be the workers' total, as MultiKueue asks.
func (v *validator) fleetCapacity(workers []string) {
	for _, f := range v.a.Flavors {
		if !f.Capacity.IsSet() {
			continue
		}
		var sum int64
		var parts []string
		for _, c := range v.a.Clusters {
			for _, cf := range c.Flavors {
				if cf.Flavor == f.Name && cf.GPUs.Value > 0 && !c.Manager.Value {
					sum = addCapped(sum, cf.GPUs.Value)
					parts = append(parts, fmt.Sprintf("%s %d", c.Name, cf.GPUs.Value))
				}
			}
		}
		if sum != f.Capacity.Value {
			held := "none"
			if len(parts) > 0 {
				held = strings.Join(parts, ", ")
			}
			v.errorf(field.ErrorTypeInvalid, f.Capacity.Pos, f.Capacity.Path, "capacity %d of flavor %s is not what the workers have (%s: %d in all): the manager admits against the capacity, so it must be the workers' total", f.Capacity.Value, f.Name, held, sum)
		}
	}
}

// shares checks the clusters keys of a team's or a department's quotas:
// known workers, counts that are not negative, guarantees (and lendable,
// when written) that add up to the quota's, lendable within the guarantee
// there and borrow within the quota's.
func (v *validator) shares(owner string, byFlavor map[string]*agreement.Quota, workers map[string]bool) {
	for _, f := range v.a.Flavors {
		q := byFlavor[f.Name]
		if q == nil || q.Clusters == nil {
			continue
		}
		var guaranteed, lendable int64
		var lendWritten bool
		for _, s := range q.Clusters {
			if !workers[s.Cluster] {
				v.errorf(field.ErrorTypeNotFound, s.Pos, s.Path, "unknown worker cluster %q (workers: %s)", s.Cluster, v.workerNames())
				continue
			}
			for _, n := range []agreement.Int{s.Guaranteed, s.Lendable, s.Borrow} {
				if n.IsSet() && n.Value < 0 {
					v.errorf(field.ErrorTypeInvalid, n.Pos, n.Path, "must not be negative, got %d", n.Value)
				}
				v.count(n)
			}
			guaranteed = addCapped(guaranteed, max(s.Guaranteed.Value, 0))
			if s.Lendable.IsSet() {
				lendWritten = true
				lendable = addCapped(lendable, max(s.Lendable.Value, 0))
				if s.Lendable.Value > s.Guaranteed.Value {
					v.errorf(field.ErrorTypeInvalid, s.Lendable.Pos, s.Lendable.Path, "lendable (%d) exceeds the guarantee in %s (%d): a %s lends only GPUs it is guaranteed there", s.Lendable.Value, s.Cluster, s.Guaranteed.Value, owner)
				}
			}
			if s.Borrow.IsSet() && s.Borrow.Value > q.Borrow.Value {
				v.errorf(field.ErrorTypeInvalid, s.Borrow.Pos, s.Borrow.Path, "borrow in %s (%d) exceeds the %s's borrow (%d): the manager never admits more", s.Cluster, s.Borrow.Value, owner, q.Borrow.Value)
			}
		}
		path, pos := q.Path.Child("clusters"), q.Pos
		if len(q.Clusters) > 0 {
			pos = q.Clusters[0].Pos
		}
		if hasGuarantee(q.Clusters) && guaranteed != q.Guaranteed.Value {
			v.errorf(field.ErrorTypeInvalid, pos, path, "the shares of the guarantee add up to %d, not to the %s's guarantee of %d GPUs of flavor %s", guaranteed, owner, q.Guaranteed.Value, f.Name)
		}
		if lendWritten && lendable != q.Lendable.Value {
			v.errorf(field.ErrorTypeInvalid, pos, path, "the shares of lendable add up to %d, not to the %s's lendable of %d GPUs of flavor %s", lendable, owner, q.Lendable.Value, f.Name)
		}
	}
}

// hasGuarantee reports whether any share writes a guarantee (else the
// guarantee is split by default).
func hasGuarantee(shares []*agreement.ClusterShare) bool {
	for _, s := range shares {
		if s.Guaranteed.State != agreement.Unset {
			return true
		}
	}
	return false
}

// workerNames lists the fleet's workers, for messages.
func (v *validator) workerNames() string {
	var out []string
	for _, c := range v.a.Clusters {
		if !c.Manager.Value {
			out = append(out, c.Name)
		}
	}
	return strings.Join(out, ", ")
}

// sharesWithoutClusters refuses clusters keys in an agreement of one
// cluster: there is nothing to split.
func (v *validator) sharesWithoutClusters() {
	refuse := func(byFlavor map[string]*agreement.Quota) {
		for _, f := range v.a.Flavors {
			if q := byFlavor[f.Name]; q != nil && q.Clusters != nil {
				v.errorf(field.ErrorTypeForbidden, q.Pos, q.Path.Child("clusters"), "the agreement has no [clusters]: a share per cluster needs the clusters it names")
			}
		}
	}
	for _, t := range v.a.Teams {
		refuse(t.ByFlavor)
	}
	for _, d := range v.a.Departments {
		refuse(d.ByFlavor)
	}
}
