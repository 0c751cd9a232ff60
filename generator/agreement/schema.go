package agreement

import _ "embed"

// Schema is the JSON Schema (draft-07) of the tenancy.toml format, version 1.
// Editors such as Taplo (Even Better TOML) use it for completion, hover text
// and checks while a person types; tenancy check remains the authority, as
// some rules (lendable at most guaranteed, guarantees within capacity) are
// beyond what a schema can say.
//
//go:embed tenancy.schema.json
var Schema []byte

// TableKeys returns the keys each table of the format accepts, by table:
// "root", "flavor", "toleration", "team", "department", "quota", "topology",
// "priority" (a priority written as a table), "guardrail", "monitoring",
// "component" ([components]), "kai" ([kai]),
// "window", "windowQuota", "cluster" ([clusters.NAME]) and "clusterShare"
// (an entry of a team's clusters written as a table);
// each is the list NAMEKeys the decoder checks the table's keys against. It
// exists so a test can hold Schema to the keys the decoder actually reads
// (and a test of the source, to every list the decoder checks against).
func TableKeys() map[string][]string {
	clone := func(keys []string) []string { return append([]string(nil), keys...) }
	return map[string][]string{
		"root":         clone(rootKeys),
		"flavor":       clone(flavorKeys),
		"toleration":   clone(tolerationKeys),
		"team":         clone(teamKeys),
		"department":   clone(departmentKeys),
		"quota":        clone(quotaKeys),
		"topology":     clone(topologyKeys),
		"priority":     clone(priorityKeys),
		"guardrail":    clone(guardrailKeys),
		"monitoring":   clone(monitoringKeys),
		"component":    clone(componentKeys),
		"window":       clone(windowKeys),
		"windowQuota":  clone(windowQuotaKeys),
		"cluster":      clone(clusterKeys),
		"clusterShare": clone(clusterShareKeys),
		"kai":          clone(kaiKeys),
	}
}
