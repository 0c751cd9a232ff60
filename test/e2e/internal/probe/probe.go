// Package probe judges the requests of the guardrails' adversarial checks
// (the control-plane suite's and the KAI suite's) one way: a probe is
// either let through or refused with every expected phrase in the message.
package probe

import (
	"strings"
	"testing"
)

// Judge reports what request err says against want: want nil means the
// request must be let through, otherwise refused with a message holding
// every entry of want. Each outcome is logged, refusals with their message,
// so the log shows what a team's admin would read.
func Judge(t testing.TB, what string, err error, want []string) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Errorf("%s: refused, want it let through: %v", what, err)
	case want != nil && err == nil:
		t.Errorf("%s: let through, want it refused", what)
	case want != nil:
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: refused with %q, want the message to contain %q", what, err, w)
			}
		}
		t.Logf("%s: refused: %v", what, err)
	default:
		t.Logf("%s: let through", what)
	}
}
