//go:build tools

// Package tools pins the Prometheus server and promtool that the monitoring
// end-to-end tests run; test/e2e/internal/binaries builds them from here.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
