package gpu

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
)

// Descriptor is what tenancy knows of one backend's queues, written once:
// the renderers, the guardrails, the windows controller's RBAC, the
// controller itself and the Argo CD ignoreDifferences all read it, so a
// group, a kind or a label cannot differ between them.
type Descriptor struct {
	Backend Backend
	// QueueGroup, QueueVersion, QueueResource and QueueKind are the API of
	// the scheduler object a team's quota lives in, and which the windows
	// controller patches. QueueVersion is the default; Kueue also serves
	// v1beta1 (Options.KueueAPI).
	QueueGroup    string
	QueueVersion  string
	QueueResource string
	QueueKind     string
	// QueueLabel is the label a workload names its queue with. KAI reads it
	// on the pod or its top owner only; on a team Namespace it records the
	// namespace's queue for people and admission policies.
	QueueLabel string
	// NamespaceQueueLabel is true when the team Namespaces carry QueueLabel
	// (KAI): Kueue routes by the LocalQueue a workload names instead.
	NamespaceQueueLabel bool
	// WindowOwned are the fields of a team's queue the windows controller
	// owns (server-side apply, field manager tenancy-windows), each a path
	// of keys from the object's root. Kueue's spec.resourceGroups is an
	// atomic list, so the whole list is owned; KAI has no lending limit, so
	// only the GPU limit (guaranteed + borrow) changes.
	WindowOwned [][]string
}

var descriptors = map[Backend]Descriptor{
	Kueue: {
		Backend:       Kueue,
		QueueGroup:    kueue.GroupVersion.Group,
		QueueVersion:  kueue.GroupVersion.Version,
		QueueResource: "clusterqueues",
		QueueKind:     "ClusterQueue",
		QueueLabel:    constants.QueueLabel,
		WindowOwned:   [][]string{{"spec", "resourceGroups"}},
	},
	KAI: {
		Backend:             KAI,
		QueueGroup:          "scheduling.run.ai",
		QueueVersion:        "v2",
		QueueResource:       "queues",
		QueueKind:           "Queue",
		QueueLabel:          "kai.scheduler/queue",
		NamespaceQueueLabel: true,
		WindowOwned:         [][]string{{"spec", "resources", "gpu", "limit"}},
	},
}

// Describe returns b's descriptor; an unknown backend gets Kueue's, the
// default backend, as Options.Normalize has refused any other name before.
func Describe(b Backend) Descriptor {
	if d, ok := descriptors[b]; ok {
		return d
	}
	return descriptors[Kueue]
}

// QueueGVR is the queues' resource at version, or at QueueVersion when
// version is empty.
func (d Descriptor) QueueGVR(version string) schema.GroupVersionResource {
	if version == "" {
		version = d.QueueVersion
	}
	return schema.GroupVersionResource{Group: d.QueueGroup, Version: version, Resource: d.QueueResource}
}

// QueueAPIVersion is the queues' apiVersion at version, or at QueueVersion
// when version is empty.
func (d Descriptor) QueueAPIVersion(version string) string {
	return d.QueueGVR(version).GroupVersion().String()
}

// WindowOwnedPaths are WindowOwned written as dotted paths, the way
// managedFields and the docs name them (spec.resourceGroups).
func (d Descriptor) WindowOwnedPaths() []string {
	out := make([]string, len(d.WindowOwned))
	for i, p := range d.WindowOwned {
		out[i] = strings.Join(p, ".")
	}
	return out
}
