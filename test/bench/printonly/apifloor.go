//go:build apifloor

// Built with -tags apifloor, printonly also links the API packages whose Go
// types the render path builds its objects from, as the project's standards
// ask (k8s.io/api for core kinds and admission policies, Kueue's own API
// types, both versions), and uses nothing from them. The whole-process
// benchmark times it beside `tenancy render` to show what linking those
// packages costs a Go process before a byte is rendered (package
// initialisation, the pages of a larger binary): the part of the start-up
// ratio no change inside tenancy can remove (docs/bench.md, "The floor").
package main

import (
	_ "k8s.io/api/admissionregistration/v1"
	_ "k8s.io/api/core/v1"
	_ "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	_ "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)
