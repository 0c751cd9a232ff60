// Package render holds what the backends produce: Kubernetes objects in any
// Go shape that encodes to JSON, plus the labels every object carries.
// Backends live in the sub-packages kueue and kai and read only a plan.
package render

import "strconv"

// Object is a rendered object before encoding.
type Object struct {
	APIVersion string
	Kind       string
	Namespace  string // empty for cluster-scoped objects
	Name       string
	// Body encodes to the whole object with encoding/json: a typed API
	// struct (so field names cannot drift) or a map for APIs whose Go module
	// is not available.
	Body any
	// Adjust, when set, edits the encoded fields: for what a Go type's
	// omitempty cannot say, such as an empty map the API server must see.
	Adjust func(fields map[string]any)
}

// Labels tenancy puts on every object, so operators can find and select
// what the agreement owns.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "tenancy"
	// PoolLabel names the agreement's pool on every object.
	PoolLabel = "tenancy.dev/pool"
	// TeamLabel names the team on every object that belongs to one team.
	TeamLabel = "tenancy.dev/team"
)

// Labels returns the labels of an object of the pool, and of team when it
// is not empty.
func Labels(pool, team string) map[string]string {
	l := map[string]string{ManagedByLabel: ManagedBy, PoolLabel: pool}
	if team != "" {
		l[TeamLabel] = team
	}
	return l
}

// NamespaceNameLabel is set by the API server on every Namespace; rendering
// it keeps the object read back equal to the object rendered.
const NamespaceNameLabel = "kubernetes.io/metadata.name"

// Namespace returns a team's Namespace object as a map: core/v1 types would
// pull in client-go's scheme for two fields.
func Namespace(pool, team, name string, extra map[string]string) Object {
	labels := Labels(pool, team)
	labels[NamespaceNameLabel] = name
	for k, v := range extra {
		labels[k] = v
	}
	return Object{
		APIVersion: "v1", Kind: "Namespace", Name: name,
		Body: map[string]any{
			"apiVersion": "v1",
			"kind":       "Namespace",
			"metadata":   map[string]any{"name": name, "labels": labels},
		},
	}
}

// VMResource is the object count a ResourceQuota limits for KubeVirt.
const VMResource = "count/virtualmachines.kubevirt.io"

// VMQuotaName names the ResourceQuota that caps a namespace's VirtualMachines.
const VMQuotaName = "tenancy-virtualmachines"

// VMQuota returns the ResourceQuota limiting KubeVirt VirtualMachines in a
// team namespace. It is the scheduler-independent part of the agreement, so
// both backends render it.
func VMQuota(pool, team, namespace string, vms int64) Object {
	return Object{
		APIVersion: "v1", Kind: "ResourceQuota", Namespace: namespace, Name: VMQuotaName,
		Body: map[string]any{
			"apiVersion": "v1",
			"kind":       "ResourceQuota",
			"metadata":   map[string]any{"name": VMQuotaName, "namespace": namespace, "labels": Labels(pool, team)},
			"spec":       map[string]any{"hard": map[string]any{VMResource: strconv.FormatInt(vms, 10)}},
		},
	}
}
