// Package params turns what Argo CD hands a Config Management Plugin into
// rendering options: the Application's plugin parameters (ARGOCD_APP_PARAMETERS
// and the PARAM_* variables derived from it), its plugin.env entries
// (ARGOCD_ENV_*), and the destination cluster's API versions
// (KUBE_API_VERSIONS). Each resolved value remembers where it came from, so an
// invalid value is reported by the name a user can find in their Application.
//
// Precedence, highest first:
//
//  1. plugin parameters: ARGOCD_APP_PARAMETERS, or PARAM_* when Argo CD did
//     not send ARGOCD_APP_PARAMETERS (both present and disagreeing is an error);
//  2. plugin.env: ARGOCD_ENV_TENANCY_BACKEND, ARGOCD_ENV_TENANCY_KUEUE_API and
//     ARGOCD_ENV_TENANCY_CLUSTER;
//  3. for the Kueue API only: KUBE_API_VERSIONS (v1beta2 when the cluster
//     serves kueue.x-k8s.io/v1beta2, v1beta1 when it serves only v1beta1);
//  4. the defaults: the backend the agreement's backend key names first
//     (kueue without the key), Kueue API v1beta2.
//
// A backend set by 1 or 2 that the agreement's backend key does not name is
// refused at the key, naming the variable or parameter that asked for it.
// The cluster (the part of a fleet agreement to render) has no default: the
// library refuses a fleet agreement without one and an agreement without
// [clusters] with one, naming where it came from, so an ApplicationSet that
// forgot it fails the sync instead of rendering the wrong cluster.
//
// An empty value counts as unset, the way Argo CD drops empty plugin.env
// entries. Every value that is set is checked, even one a higher source
// overrides. Unknown parameter names and unknown ARGOCD_ENV_TENANCY_* names are
// errors: a typo must not silently render for the wrong scheduler.
package params

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tenancy-dev/tenancy/generator"
)

// Parameter names, as announced in argocd/plugin.yaml and set in an
// Application's spec.source.plugin.parameters.
const (
	Backend  = "backend"
	KueueAPI = "kueueAPI"
	Cluster  = "cluster"
)

// Environment variables Argo CD sets for the generate command.
const (
	// EnvParameters holds every parameter the user set, as a JSON array.
	EnvParameters = "ARGOCD_APP_PARAMETERS"
	// EnvAPIVersions lists the destination cluster's group/version and
	// group/version/Kind strings, comma-separated.
	EnvAPIVersions = "KUBE_API_VERSIONS"
	// EnvBackend, EnvKueueAPI and EnvCluster are plugin.env entries
	// TENANCY_BACKEND, TENANCY_KUEUE_API and TENANCY_CLUSTER, which Argo CD
	// prefixes with ARGOCD_ENV_.
	EnvBackend  = "ARGOCD_ENV_TENANCY_BACKEND"
	EnvKueueAPI = "ARGOCD_ENV_TENANCY_KUEUE_API"
	EnvCluster  = "ARGOCD_ENV_TENANCY_CLUSTER"
)

// argoEnvPrefix is what Argo CD puts before each plugin.env name.
const argoEnvPrefix = "ARGOCD_ENV_"

// envPrefix is the part of ARGOCD_ENV_* names that belongs to this plugin;
// anything under it that is not known is a typo.
const envPrefix = "ARGOCD_ENV_TENANCY_"

// kueueGroup is the API group whose served versions choose the Kueue API.
const kueueGroup = "kueue.x-k8s.io"

// Origins of a value, as Resolved reports them.
const (
	FromDefault     = "default"
	FromAPIVersions = EnvAPIVersions
)

// Value is one resolved setting and where it came from: an environment
// variable name, "ARGOCD_APP_PARAMETERS parameter backend", or "default".
type Value struct {
	Value string
	From  string
}

// Resolved is the outcome of Resolve.
type Resolved struct {
	Backend  Value
	KueueAPI Value
	// Cluster is the part of a fleet agreement to render; unset for an
	// agreement without [clusters].
	Cluster Value
}

// ClusterUnset is how the refusal of a fleet agreement without a cluster
// names what to set.
const ClusterUnset = "the plugin parameter cluster"

// FromAgreement is the origin of a backend the agreement chose: its backend
// key, or the default without one (Rendered).
const FromAgreement = "the agreement"

// Options returns the rendering options. Without a backend from a parameter
// or plugin.env, the backend is the agreement's to choose.
func (r Resolved) Options() generator.Options {
	o := generator.Options{Backend: generator.Backend(r.Backend.Value), KueueAPI: r.KueueAPI.Value, Cluster: r.Cluster.Value}
	if o.Backend != "" {
		o.BackendFrom = r.Backend.From
	}
	// The refusal of a cluster the agreement has no part for names the
	// parameter or entry to fix; that of a fleet without one, what to add.
	o.ClusterFrom = r.Cluster.From
	if o.Cluster == "" {
		o.ClusterFrom = ClusterUnset
	}
	return o
}

// Rendered returns r with the backend a render used filled in when no
// parameter or plugin.env chose it: from the agreement's backend key when
// it has one (FromAgreement), else the default.
func (r Resolved) Rendered(res *generator.Result) Resolved {
	if r.Backend.Value != "" {
		return r
	}
	from := FromDefault
	if res.Plan != nil && res.Plan.Backend != nil {
		from = FromAgreement
	}
	r.Backend = Value{string(res.Backend), from}
	return r
}

// String describes the settings and their origins in one line, for the
// plugin's log (Argo CD records a successful plugin's stderr).
func (r Resolved) String() string {
	var s string
	switch r.Backend.Value {
	case "":
		s = fmt.Sprintf("backend the agreement's, Kueue API %s (%s)", r.KueueAPI.Value, r.KueueAPI.From)
	case string(generator.KAI):
		s = fmt.Sprintf("backend %s (%s)", r.Backend.Value, r.Backend.From)
	default:
		s = fmt.Sprintf("backend %s (%s), Kueue API %s (%s)", r.Backend.Value, r.Backend.From, r.KueueAPI.Value, r.KueueAPI.From)
	}
	if r.Cluster.Value != "" {
		s += fmt.Sprintf(", cluster %s (%s)", r.Cluster.Value, r.Cluster.From)
	}
	return s
}

// setting describes one option: its parameter name, the PARAM_* variable
// Argo CD derives from it, its plugin.env variable, and how to check a value.
type setting struct {
	param string
	env   string
	check func(string) error
}

var settings = []setting{
	{Backend, EnvBackend, func(v string) error {
		_, err := generator.Options{Backend: generator.Backend(v)}.Normalize()
		return err
	}},
	{KueueAPI, EnvKueueAPI, func(v string) error {
		_, err := generator.Options{KueueAPI: v}.Normalize()
		return err
	}},
	// Which names are parts depends on the agreement: the render checks
	// the cluster against its [clusters].
	{Cluster, EnvCluster, func(string) error { return nil }},
}

// paramVar is the variable Argo CD sets for a string parameter: PARAM_ and
// the name upper-cased with everything but A-Z, 0-9 and _ replaced by _.
func paramVar(name string) string {
	var b strings.Builder
	b.WriteString("PARAM_")
	for _, r := range strings.ToUpper(name) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Resolve computes the rendering options from environ, a list of KEY=VALUE
// strings as os.Environ returns. Every error wraps generator.ErrOptions and
// names the variable or parameter the bad value came from.
func Resolve(environ []string) (Resolved, error) {
	env := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v // later entries win, as in exec.Cmd.Env
	}
	if err := checkEnvNames(env); err != nil {
		return Resolved{}, err
	}
	params, sentJSON, err := parseParameters(env[EnvParameters])
	if err != nil {
		return Resolved{}, err
	}

	values := make([]Value, len(settings))
	for i, s := range settings {
		v, err := resolveOne(s, env, params, sentJSON)
		if err != nil {
			return Resolved{}, err
		}
		values[i] = v
	}
	// An unset backend stays unset: the agreement chooses it (Options).
	r := Resolved{Backend: values[0], KueueAPI: values[1], Cluster: values[2]}
	if r.KueueAPI.Value == "" {
		r.KueueAPI = kueueAPIFromCluster(env[EnvAPIVersions])
	}
	return r, nil
}

func resolveOne(s setting, env, params map[string]string, sentJSON bool) (Value, error) {
	pv := paramVar(s.param)
	// candidates in precedence order; every one that is set is checked, so a
	// bad plugin.env entry fails even while a parameter overrides it.
	var candidates []Value
	if sentJSON {
		// PARAM_* is derived from the same parameters; a different value can
		// only come from somewhere else (the sidecar's own environment), and
		// guessing which one the user meant is not fail-closed.
		fromJSON, inJSON := params[s.param]
		if fromEnv := env[pv]; fromEnv != "" && fromEnv != fromJSON {
			if !inJSON {
				return Value{}, fmt.Errorf("%w: %s=%q is set but %s has no parameter %s", generator.ErrOptions, pv, fromEnv, EnvParameters, s.param)
			}
			return Value{}, fmt.Errorf("%w: %s=%q disagrees with parameter %s=%q in %s", generator.ErrOptions, pv, fromEnv, s.param, fromJSON, EnvParameters)
		}
		candidates = append(candidates, Value{fromJSON, EnvParameters + " parameter " + s.param})
	} else {
		candidates = append(candidates, Value{env[pv], pv})
	}
	candidates = append(candidates, Value{env[s.env], s.env})

	var chosen Value
	for _, c := range candidates {
		if c.Value == "" {
			continue
		}
		if err := s.check(c.Value); err != nil {
			return Value{}, fmt.Errorf("%s: %w", c.From, err)
		}
		if chosen.Value == "" {
			chosen = c
		}
	}
	return chosen, nil
}

// checkEnvNames rejects ARGOCD_ENV_TENANCY_* variables this plugin does not
// know, so TENANCY_BAKEND in plugin.env fails instead of being ignored.
func checkEnvNames(env map[string]string) error {
	var unknown []string
	for k := range env {
		if !strings.HasPrefix(k, envPrefix) {
			continue
		}
		known := false
		for _, s := range settings {
			known = known || k == s.env
		}
		if !known {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	for i, k := range unknown {
		unknown[i] = fmt.Sprintf("%s (%s)", strings.TrimPrefix(k, argoEnvPrefix), k)
	}
	return fmt.Errorf("%w: unknown plugin.env entry %s: known are %s", generator.ErrOptions,
		strings.Join(unknown, ", "), knownNames(func(s setting) string { return strings.TrimPrefix(s.env, argoEnvPrefix) }))
}

// knownNames lists one name of every setting as a sentence does: "a, b
// and c", for the messages refusing an unknown one.
func knownNames(name func(setting) string) string {
	names := make([]string, len(settings))
	for i, s := range settings {
		names[i] = name(s)
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// parameter is one element of ARGOCD_APP_PARAMETERS. Argo CD writes "string"
// for string parameters, "array" or "map" for the others, and omits all three
// when the user named a parameter without a value.
type parameter struct {
	Name   string            `json:"name"`
	String *string           `json:"string"`
	Array  []string          `json:"array"`
	Map    map[string]string `json:"map"`
}

// parseParameters decodes ARGOCD_APP_PARAMETERS into name → string value.
// sent is false when the variable is absent or empty; Argo CD sends "null" or
// "[]" for an Application with a plugin section but no parameters.
func parseParameters(raw string) (values map[string]string, sent bool, err error) {
	values = map[string]string{}
	if strings.TrimSpace(raw) == "" {
		return values, false, nil
	}
	var ps []parameter
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ps); err != nil {
		return nil, false, fmt.Errorf("%w: %s is not a JSON array of parameters: %v", generator.ErrOptions, EnvParameters, err)
	}
	if dec.More() {
		return nil, false, fmt.Errorf("%w: %s: unexpected data after the JSON array", generator.ErrOptions, EnvParameters)
	}
	seen := map[string]bool{}
	for _, p := range ps {
		if !knownParam(p.Name) {
			return nil, false, fmt.Errorf("%w: %s: unknown parameter %q: known are %s", generator.ErrOptions, EnvParameters, p.Name,
				knownNames(func(s setting) string { return s.param }))
		}
		if seen[p.Name] {
			return nil, false, fmt.Errorf("%w: %s: parameter %s is set more than once", generator.ErrOptions, EnvParameters, p.Name)
		}
		seen[p.Name] = true
		if p.Array != nil || p.Map != nil {
			return nil, false, fmt.Errorf("%w: %s: parameter %s must be a string, not an array or a map", generator.ErrOptions, EnvParameters, p.Name)
		}
		if p.String != nil {
			values[p.Name] = *p.String
		}
	}
	return values, true, nil
}

func knownParam(name string) bool {
	for _, s := range settings {
		if s.param == name {
			return true
		}
	}
	return false
}

// kueueAPIFromCluster picks the Kueue API version the destination cluster
// serves. Entries are group/version or group/version/Kind.
func kueueAPIFromCluster(apiVersions string) Value {
	served := map[string]bool{}
	for _, entry := range strings.Split(apiVersions, ",") {
		parts := strings.Split(strings.TrimSpace(entry), "/")
		if len(parts) >= 2 && parts[0] == kueueGroup {
			served[parts[1]] = true
		}
	}
	switch {
	case served[generator.KueueV1beta2]:
		return Value{generator.KueueV1beta2, FromAPIVersions}
	case served[generator.KueueV1beta1]:
		return Value{generator.KueueV1beta1, FromAPIVersions}
	}
	// No Kueue on the cluster yet (it may be installed in the same sync), or
	// the plugin runs without a destination: render for current Kueue.
	return Value{generator.KueueV1beta2, FromDefault}
}
