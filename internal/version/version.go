// Package version holds tenancy's release version, a constant of the build:
// `tenancy --version` prints it and the windows controller's Deployment runs
// the image of that tag, so the two cannot disagree, and a render stays the
// same whatever machine or build flags made the binary. A release bumps it
// in the commit that is tagged (docs/argocd.md, "Release steps").
package version

// Version is the release this source tree is, as its Git tag writes it.
const Version = "v0.1.0"
