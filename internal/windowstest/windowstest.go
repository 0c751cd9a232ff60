// Package windowstest holds the lending-window agreement of the windows
// issue in the parts tests combine, so that every package handling windows
// (planning, scheduling, the controller's objects, the facade, the CLI)
// tests the same document, and a variant differs from it only where it says
// so. It lives at the module's root, not under generator/internal, so that
// cmd/tenancy's tests can import it too; it imports only the standard
// library, so no generator package's test depends on another step through it.
package windowstest

import (
	"testing"
	"time"
)

// Head is the pool and inference, which guarantees 8 of the 16 H100s and
// lends none of them outside its windows.
const Head = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 16
[teams.inference]
guaranteed = 8
lendable = 0
`

// WeekdayNights is inference's window: Monday to Friday from 20:00 to
// 06:00, Berlin time, lending 6. It is the last table written, so a variant
// may append keys to the window.
const WeekdayNights = `[[teams.inference.windows]]
days = ["Mon", "Tue", "Wed", "Thu", "Fri"]
from = "20:00"
to = "06:00"
timezone = "Europe/Berlin"
lendable = 6
`

// Research is the team that may borrow what inference lends: 6 GPUs.
const Research = `[teams.research]
guaranteed = 8
borrow = 6
`

// Agreement is the agreement as written there.
const Agreement = Head + WeekdayNights + Research

// At is the instant written in RFC 3339 (with its offset, so a case says
// which side of a clock change it means), failing the test when it is not.
func At(t testing.TB, rfc3339 string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
