package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// explainPools says, when the agreement is rendered for KAI, how its GPU
// work reaches each flavor: one node pool per flavor the teams hold (its
// label value, its queues) on an agreement of several, and which flavors
// share their GPUs by fraction. Nothing for an agreement of one queue tree
// whose flavors do not share, so such agreements explain as before.
func explainPools(w io.Writer, p *plan.Agreement, opts generator.Options) {
	if !slices.Contains(opts.Backends(p), generator.KAI) {
		return
	}
	pools := gpu.Pools(p)
	var sharing []string
	for _, f := range p.Flavors {
		if f.GPUSharing == plan.GPUSharingFraction {
			sharing = append(sharing, f.Name)
		}
	}
	if pools == nil && len(sharing) == 0 {
		return
	}
	if pools == nil {
		fmt.Fprintf(w, "\nKAI: pods may ask for part of a GPU of %s (annotation gpu-fraction or gpu-memory, on the team's queue);\n", strings.Join(sharing, ", "))
		fmt.Fprintln(w, "  the guardrails refuse fractions of any other flavor.")
		return
	}
	fmt.Fprintf(w, "\nKAI node pools (one SchedulingShard and queue tree per flavor; GPU work names its team's queue of a pool\n")
	fmt.Fprintf(w, "  and carries the pool's label %s, on the workload or its pod template)\n", p.NodePoolLabel)
	tw := tableWriter(w)
	tableRow(tw, "POOL", "LABEL VALUE", "RESOURCE", "GPU SHARING", "TEAM QUEUES")
	for _, pool := range pools {
		var queues []string
		for i := range p.Teams {
			if pool.HasQueue(&p.Teams[i]) {
				queues = append(queues, gpu.QueueName(p, p.Teams[i].Name, pool.Flavor))
			}
		}
		if len(queues) == 0 {
			queues = []string{"none (departments only)"}
		}
		tableRow(tw, pool.Name, pool.Value, pool.Flavor.Resource, pool.Flavor.GPUSharing, strings.Join(queues, ", "))
	}
	tw.Flush()
	fmt.Fprintln(w, "  The guardrails refuse GPU work without the pool label, with another pool's label than its queue's, asking for")
	fmt.Fprintln(w, "  a resource its pool does not hold, or asking for part of a GPU in a pool that does not share. Nodes are not")
	fmt.Fprintln(w, "  labelled by tenancy: see docs/kai.md.")
}
