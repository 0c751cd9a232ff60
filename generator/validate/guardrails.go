package validate

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
)

// podSecurityLevels are Pod Security Admission's levels, least strict first.
var podSecurityLevels = []string{"privileged", "baseline", "restricted"}

// namespacePrunes are the values of guardrails.namespace_prune.
var namespacePrunes = []string{"never", "confirm", "allow"}

// guardrails checks the [guardrails] table's values.
func (v *validator) guardrails() {
	g := v.a.Guardrails
	if g == nil {
		return
	}
	v.oneOf(g.PodSecurity, podSecurityLevels)
	v.oneOf(g.PodSecurityAudit, podSecurityLevels)
	v.oneOf(g.NamespacePrune, namespacePrunes)
	seen := map[string]bool{}
	for _, ns := range g.AllowIngressFrom {
		if !v.dnsLabel(ns.Pos, ns.Path, ns.Value) {
			continue
		}
		if seen[ns.Value] {
			v.errorf(field.ErrorTypeDuplicate, ns.Pos, ns.Path, "namespace %q is listed twice", ns.Value)
		}
		seen[ns.Value] = true
	}
	for _, c := range g.TrustedControllers {
		v.userName(c, "a trusted controller")
	}
}

// userName reports a value that is no user name the guardrails can compare
// with a request's (what names what the value is): empty, or with blanks.
func (v *validator) userName(s agreement.Str, what string) {
	if s.Value == "" || strings.ContainsAny(s.Value, " \t\r\n") {
		v.errorf(field.ErrorTypeInvalid, s.Pos, s.Path, "%s is a user name without blanks, such as system:serviceaccount:<namespace>:<name>; got %q", what, s.Value)
	}
}

// oneOf reports a written value that is not one of allowed.
func (v *validator) oneOf(s agreement.Str, allowed []string) {
	if !s.IsSet() {
		return
	}
	for _, a := range allowed {
		if s.Value == a {
			return
		}
	}
	v.errorf(field.ErrorTypeNotSupported, s.Pos, s.Path, "must be one of %q, got %q", allowed, s.Value)
}
