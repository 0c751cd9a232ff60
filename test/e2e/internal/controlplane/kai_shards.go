package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// KAINodePoolLabel is KAI's node-pool label key at its default (the Config's
// spec.global.nodePoolLabelKey, pkg/common/constants DefaultNodePoolLabelKey):
// a shard's scheduler sees only the Nodes, Queues and PodGroups whose label
// has its partition value, and the default shard those without the label.
const KAINodePoolLabel = "kai.scheduler/node-pool"

// startKAIShards starts one KAI scheduler per node pool, beside the default
// shard's scheduler StartKAI runs: what KAI's operator does for each
// SchedulingShard (pkg/operator/operands/scheduler/resources_for_shard.go
// buildArgsList: the shard's partition value, the global node-pool and
// queue label keys, a scheduler configuration of its own, and the shard's
// deployment running as the one scheduler service account). Each shard's
// configuration is the chart default's (placementStrategy binpack), which is
// what a SchedulingShard without placement fields gets
// (SchedulingShard SetDefaultsWhereNeeded). The podgrouper already runs with
// --nodepool-label-key, so PodGroups carry their workload's pool label; the
// binder, queue controller and podgroup controller take no pool argument.
func (cp *ControlPlane) startKAIShards(ctx context.Context, base Options, shards []string, env []string) error {
	if len(shards) == 0 {
		return nil
	}
	ports, err := freePorts(3 * len(shards))
	if err != nil {
		return err
	}
	for i, pool := range shards {
		if pool == "" {
			return fmt.Errorf("KAI shard %d: empty partition value (the default shard always runs)", i)
		}
		name := "scheduler-" + pool
		conf := filepath.Join(base.Dir, "kai-"+name+"-config.yaml")
		if err := os.WriteFile(conf, []byte(KAISchedulerConfig), 0o600); err != nil {
			return err
		}
		listen, profiler, plugin := ports[3*i], ports[3*i+1], ports[3*i+2]
		p, err := startProcess(base.Dir, name, base.Binaries["scheduler"], []string{
			"--scheduler-conf=" + conf,
			"--scheduler-name=" + KAISchedulerName,
			"--namespace=" + KAINamespace,
			"--nodepool-label-key=" + KAINodePoolLabel,
			"--partition-label-value=" + pool,
			"--resource-reservation-app-label=kai-resource-reservation",
			"--queue-label-key=kai.scheduler/queue",
			"--listen-address=" + hostPort(listen),
			"--profiler-port=" + fmt.Sprint(profiler),
			"--plugin-server-port=" + fmt.Sprint(plugin),
		}, env)
		if err != nil {
			return err
		}
		cp.procs = append(cp.procs, p)
		if err := cp.waitHTTP(ctx, name, fmt.Sprintf("http://%s/metrics", hostPort(listen)), nil, 90*time.Second); err != nil {
			return err
		}
	}
	return nil
}
