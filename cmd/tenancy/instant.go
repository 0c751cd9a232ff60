package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// parseTime reads an instant the way every command that takes one does
// (report's --from and --to, explain's --at): RFC 3339, "now", or a minus
// sign and a Prometheus duration (-30d, -12h, -1d12h). The result is in UTC.
func parseTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("is required (RFC 3339 such as 2026-11-01T00:00:00Z, or relative such as -30d)")
	}
	if s == "now" {
		return now, nil
	}
	if ago, ok := strings.CutPrefix(s, "-"); ok {
		if d, err := model.ParseDuration(ago); err == nil {
			return now.Add(-time.Duration(d)), nil
		}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither RFC 3339 (2026-11-01T00:00:00Z) nor relative (-30d, -12h, now)", s)
	}
	return t.UTC(), nil
}
