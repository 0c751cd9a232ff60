package kai

import (
	"regexp"
	"strconv"
)

// maxExact is the largest count KAI's float64 quotas hold exactly (2^53).
const maxExact = 1 << 53

// migProfile is how KAI reads a MIG resource name
// (pkg/scheduler/api/common_info/resources/mig.go,
// ExtractGpuAndMemoryFromMigResourceName): nvidia.com/mig-<N>g.<M>gb.
var migProfile = regexp.MustCompile(`^nvidia\.com/mig-(\d+)g\.(\d+)gb$`)

// GPUsPer returns how many GPUs KAI counts against a queue's gpu quota and
// limit for one unit of a resource: 1 for a whole GPU, N for a MIG slice
// nvidia.com/mig-<N>g.<M>gb (GpuResourceRequirement.GetGpusQuota), and 0
// for a resource KAI does not count as GPUs at all.
func GPUsPer(resource string) int64 {
	if resource == WholeGPU {
		return 1
	}
	m := migProfile.FindStringSubmatch(resource)
	if m == nil {
		return 0
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > maxExact {
		return 0 // KAI's strconv.Atoi fails too: it counts nothing
	}
	return n
}

// counted reports whether KAI counts a resource as GPUs.
func counted(resource string) bool { return GPUsPer(resource) > 0 }

// inGPUs converts a count of a resource to the GPUs KAI counts for it,
// saturating at maxExact (Rules refuses agreements that get there).
func inGPUs(resource string, n int64) int64 {
	per := GPUsPer(resource)
	if per == 0 || n == 0 {
		return 0
	}
	if n > maxExact/per {
		return maxExact
	}
	return n * per
}
