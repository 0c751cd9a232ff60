package plan

import "github.com/tenancy-dev/tenancy/generator/diag"

// CheckFleet reports what a fleet's split makes of the agreement (nil
// without a fleet).
func CheckFleet(p *Agreement) diag.List { return nil }
