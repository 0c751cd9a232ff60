package probe

import (
	"context"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/await"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// typeCheckBound bounds the wait for the type checker's verdicts: a few
// seconds alone, over 30 s while make e2e's other suites keep both cores
// busy. A bound, not a delay.
const typeCheckBound = 2 * time.Minute

// TypeCheckAtEnd starts cp's policy type checker (TypeCheckPolicies) and,
// when t ends, waits for its verdict on each of policies, failing t on any
// warning (a CEL expression that refers to a field or function that does
// not exist), then stops it. The type check takes seconds of CPU per
// matched kind, so a check's probes run beside it rather than after it.
func TypeCheckAtEnd(t testing.TB, cp *controlplane.ControlPlane, w await.Waits, policies []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stop, err := cp.TypeCheckPolicies(ctx)
	if err != nil {
		t.Fatalf("start the policy type checker: %v", err)
	}
	t.Cleanup(func() {
		defer stop()
		for _, name := range policies {
			ctx, cancel := context.WithTimeout(context.Background(), typeCheckBound+10*time.Second)
			w.UntilWithin(t, ctx, typeCheckBound, "policy "+name+" type-checked", func(ctx context.Context) (bool, string) {
				done, warnings, why := TypeChecked(ctx, cp.Dynamic, name)
				for _, warning := range warnings {
					t.Errorf("policy %s: the API server's type check warns: %v", name, warning)
				}
				return done, why
			})
			cancel()
		}
	})
}
