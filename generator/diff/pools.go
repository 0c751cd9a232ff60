package diff

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// kaiQueues are team t's KAI Queues and, for each, its node pool's label
// value ("" for an agreement of one queue tree (pools nil), whose Queue is
// the team's name). pools are gpu.Pools of t's agreement, read once per
// side: they scan the teams.
func kaiQueues(pools []gpu.Pool, t *plan.Team) map[string]string {
	if pools == nil {
		return map[string]string{t.Name: ""}
	}
	out := map[string]string{}
	for _, pool := range pools {
		if pool.HasQueue(t) {
			out[gpu.PoolQueueName(t.Name, pool.Name)] = pool.Value
		}
	}
	return out
}

// queueList writes queues as "training-h100 (node pool h100), ...", sorted.
func queueList(qs map[string]string) string {
	var out []string
	for _, q := range slices.Sorted(maps.Keys(qs)) {
		if qs[q] == "" {
			out = append(out, q)
			continue
		}
		out = append(out, fmt.Sprintf("%s (node pool %s)", q, qs[q]))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// comparePools says in words what a change does to KAI's node pools, for a
// report rendered for KAI: the label key, a flavor's pool label value or
// GPU sharing, and each team whose Queues are renamed (an agreement that
// gains or loses a second pool, a team that gains or loses quota in a
// pool). A workload names its Queue and its pool: each of these asks the
// teams to relabel their work. nil when none changes.
func comparePools(old, new *plan.Agreement, backend generator.Backend) []string {
	if backend != generator.KAI {
		return nil
	}
	var out []string
	if old.NodePoolLabel != "" && new.NodePoolLabel != "" && old.NodePoolLabel != new.NodePoolLabel {
		out = append(out, fmt.Sprintf("the node pool label is %s, no longer %s: every pool's Nodes, and the GPU work of every team, need the new label", new.NodePoolLabel, old.NodePoolLabel))
	}
	for i := range new.Flavors {
		f := &new.Flavors[i]
		was := old.Flavor(f.Name)
		if was == nil {
			continue
		}
		if was.NodePool != "" && was.NodePool != f.NodePool {
			out = append(out, fmt.Sprintf("flavor %s: node pool label value %s, no longer %s: its Nodes and the work that runs on them need %s: %s", f.Name, f.NodePool, was.NodePool, new.NodePoolLabel, f.NodePool))
		}
		if was.GPUSharing != "" && was.GPUSharing != f.GPUSharing {
			switch f.GPUSharing {
			case plan.GPUSharingFraction:
				out = append(out, fmt.Sprintf("flavor %s now shares its GPUs by fraction: pods may ask for part of one (gpu-fraction, gpu-memory)", f.Name))
			default:
				out = append(out, fmt.Sprintf("flavor %s no longer shares its GPUs by fraction: new pods asking for part of one are refused (running ones keep their share)", f.Name))
			}
		}
	}
	oldTeams := byName(old)
	oldPools, newPools := gpu.Pools(old), gpu.Pools(new)
	for i := range new.Teams {
		t := &new.Teams[i]
		was := oldTeams[t.Name]
		if was == nil {
			continue
		}
		before, after := kaiQueues(oldPools, was), kaiQueues(newPools, t)
		var gone []string
		for q := range before {
			if _, ok := after[q]; !ok {
				gone = append(gone, q)
			}
		}
		if len(gone) == 0 && len(before) == len(after) {
			continue
		}
		line := fmt.Sprintf("team %s's KAI queues: %s, no longer %s", t.Name, queueList(after), queueList(before))
		if len(gone) > 0 {
			slices.Sort(gone)
			line += fmt.Sprintf("; KAI deletes %s: work labelled with a deleted queue must name a new one", strings.Join(gone, ", "))
			if newPools != nil {
				line += " and carry its pool's label " + new.NodePoolLabel
			}
		}
		out = append(out, line)
	}
	return out
}
