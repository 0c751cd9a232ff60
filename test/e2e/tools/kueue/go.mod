module github.com/tenancy-dev/tenancy/test/e2e/tools/kueue

go 1.26.0

require sigs.k8s.io/kueue v0.17.0
