package generator_test

// sameAsKueue marks a fixture whose KAI diagnostics are its Kueue ones.
var sameAsKueue = []string{"same as kueue"}

// wantDiagnostics are what Check (and so Render) says of each fixture under
// generator/testdata/check, per backend ("kueue" for both Kueue API
// versions): severity, type, file:line:col, field path and message, in the
// order they are printed. The file is named tenancy.toml here; the test puts
// the fixture's path in its place. nil: valid, without a warning. They pin
// what issue 28 found check passing and render refusing without a position
// (a team namespace that is the windows controller's; a team named like the
// default LocalQueue) to the key that causes it, and the reserved names,
// weight 0 and day names in any case beside them.
var wantDiagnostics = map[string]map[string][]string{
	"generator/testdata/check/component-namespaces.toml": {
		"kueue": {
			"error FieldValueForbidden tenancy.toml:14:15: teams.ops.namespaces[0]: namespace \"kueue-system\" is Kueue's namespace (components.kueue_namespace) and cannot be given to a team: the team's admin would hold that namespace, and the team's quotas and network policy would apply to its pods; if this cluster runs it in another namespace, name that one in [components]",
			"error FieldValueForbidden tenancy.toml:14:31: teams.ops.namespaces[1]: namespace \"kai-scheduler\" is KAI Scheduler's namespace (components.kai_namespace) and cannot be given to a team: the team's admin would hold that namespace, and the team's quotas and network policy would apply to its pods; if this cluster runs it in another namespace, name that one in [components]",
			"error FieldValueForbidden tenancy.toml:14:48: teams.ops.namespaces[2]: namespace \"kai-resource-reservation\" is the namespace of KAI Scheduler's GPU reservation pods (components.kai_reservation_namespace) and cannot be given to a team: the team's admin would hold that namespace, and the team's quotas and network policy would apply to its pods; if this cluster runs it in another namespace, name that one in [components]",
			"error FieldValueForbidden tenancy.toml:14:76: teams.ops.namespaces[3]: namespace \"argocd\" is Argo CD's namespace (components.argocd_namespace) and cannot be given to a team: the team's admin would hold that namespace, and the team's quotas and network policy would apply to its pods; if this cluster runs it in another namespace, name that one in [components]",
			"error FieldValueForbidden tenancy.toml:14:86: teams.ops.namespaces[4]: namespace \"tenancy-system\" is where tenancy runs the lending windows' controller (rendered as soon as a team has a window) and cannot be given to a team: the team's Namespace and the controller's would be one object",
			"error FieldValueForbidden tenancy.toml:14:104: teams.ops.namespaces[5]: namespace \"observability\" is the monitoring namespace, where the PrometheusRule and the dashboard go (monitoring.namespace) and cannot be given to a team: the team's admin would hold that namespace, and the team's quotas and network policy would apply to its pods",
			"error FieldValueForbidden tenancy.toml:14:121: teams.ops.namespaces[6]: namespace \"default\" is the cluster's default namespace and cannot be given to a team: tenancy would label it with the guardrails' Pod Security levels and Argo CD prune options, and put the team's quotas and network policy on everything that runs there without a namespace of its own; give the team a namespace of its own",
		},
		"kai": sameAsKueue,
	},
	"generator/testdata/check/components-elsewhere.toml": {
		"kueue": {
			"error FieldValueForbidden tenancy.toml:14:41: teams.ops.namespaces[2]: namespace \"kueue\" is Kueue's namespace (components.kueue_namespace) and cannot be given to a team: the team's admin would hold that namespace, and the team's quotas and network policy would apply to its pods",
			"error FieldValueForbidden tenancy.toml:14:50: teams.ops.namespaces[3]: namespace \"gitops\" is Argo CD's namespace (components.argocd_namespace) and cannot be given to a team: the team's admin would hold that namespace, and the team's quotas and network policy would apply to its pods",
		},
		"kai": sameAsKueue,
	},
	"generator/testdata/check/default-team-default-queue.toml": {
		"kueue": {
			"error FieldValueDuplicate tenancy.toml:14:8: teams.default: kueue: team \"default\" has the name of the LocalQueue that guardrails.default_queue (line 12) puts in every team namespace: the team's own LocalQueue and the default one would be one object; rename the team, or turn default_queue off",
			"error FieldValueForbidden tenancy.toml:14:8: teams.default: namespace \"default\" is the cluster's default namespace and cannot be given to a team: tenancy would label it with the guardrails' Pod Security levels and Argo CD prune options, and put the team's quotas and network policy on everything that runs there without a namespace of its own; give the team a namespace of its own",
		},
		"kai": {
			"warning FieldValueNotSupported tenancy.toml:12:17: warning: guardrails.default_queue: kai: a default queue is Kueue's (LocalQueue defaulting); under KAI a pod without the kai.scheduler/queue label is refused by the queue policies instead",
			"error FieldValueForbidden tenancy.toml:14:8: teams.default: namespace \"default\" is the cluster's default namespace and cannot be given to a team: tenancy would label it with the guardrails' Pod Security levels and Argo CD prune options, and put the team's quotas and network policy on everything that runs there without a namespace of its own; give the team a namespace of its own",
		},
	},
	"generator/testdata/check/default-team-own-namespace.toml": {
		"kueue": {
			"error FieldValueDuplicate tenancy.toml:13:8: teams.default: kueue: team \"default\" has the name of the LocalQueue that guardrails.default_queue (line 11) puts in every team namespace: the team's own LocalQueue and the default one would be one object; rename the team, or turn default_queue off",
		},
		"kai": {
			"warning FieldValueNotSupported tenancy.toml:11:17: warning: guardrails.default_queue: kai: a default queue is Kueue's (LocalQueue defaulting); under KAI a pod without the kai.scheduler/queue label is refused by the queue policies instead",
		},
	},
	"generator/testdata/check/weight-zero-and-day-case.toml": {
		"kueue": {
			"warning FieldValueInvalid tenancy.toml:12:10: warning: teams.scavenger.weight: weight 0 gives the team no share of the idle GPUs others ask for: KAI (overQuotaWeight 0) gives it none of the surplus and reclaims what it borrows first, and Kueue with fair sharing on ranks it last and preempts it first (with fair sharing off, tenancy's default, Kueue ignores weight); give it a borrow of 0 if it must never borrow, or a weight of 1 for an equal share",
		},
		"kai": {
			"warning FieldValueInvalid tenancy.toml:12:10: warning: teams.scavenger.weight: weight 0 gives the team no share of the idle GPUs others ask for: KAI (overQuotaWeight 0) gives it none of the surplus and reclaims what it borrows first, and Kueue with fair sharing on ranks it last and preempts it first (with fair sharing off, tenancy's default, Kueue ignores weight); give it a borrow of 0 if it must never borrow, or a weight of 1 for an equal share",
			"warning FieldValueNotSupported tenancy.toml:22:12: warning: teams.inference.windows[0].lendable: kai: KAI has no lending limit, so the window's lendable (8 of flavor h100) is not applied: outside and inside the window, KAI lends what the team's place in the queue tree allows (see docs/kai.md); only the window's borrow is",
		},
	},
	"generator/testdata/check/windows-controller-namespace.toml": {
		"kueue": {
			"error FieldValueForbidden tenancy.toml:11:15: teams.platform.namespaces[0]: namespace \"tenancy-system\" is where tenancy runs the lending windows' controller (rendered as soon as a team has a window) and cannot be given to a team: the team's Namespace and the controller's would be one object",
		},
		"kai": {
			"error FieldValueForbidden tenancy.toml:11:15: teams.platform.namespaces[0]: namespace \"tenancy-system\" is where tenancy runs the lending windows' controller (rendered as soon as a team has a window) and cannot be given to a team: the team's Namespace and the controller's would be one object",
			"warning FieldValueNotSupported tenancy.toml:19:12: warning: teams.platform.windows[0].lendable: kai: KAI has no lending limit, so the window's lendable (4 of flavor h100) is not applied: outside and inside the window, KAI lends what the team's place in the queue tree allows (see docs/kai.md); only the window's borrow is",
			"warning FieldValueNotSupported tenancy.toml:23:12: warning: teams.research.lendable: kai: KAI has no lending limit: all 8 idle guaranteed GPUs may be lent, not only 4; they are reclaimed when the team needs them",
		},
	},
}
