// Package cmpsuite runs the tenancy Config Management Plugin under Argo CD's
// own CMP server code, in-process: the server reads the project's real
// argocd/plugin.yaml, and runs a tenancy binary built from this checkout, the
// way the repo-server sidecar does. The client streams repositories to it with
// Argo CD's own util/cmp.SendRepoStream and builds the plugin's environment
// with Argo CD's own parameter encoding.
//
// The suite imports no Argo CD module: test/argocd/v2 and test/argocd/v3 each
// implement ArgoCD in a thin adapter against their Argo CD major, and run the
// same checks with Run.
package cmpsuite

import (
	"context"
	"io"
)

// ArgoCD is what the suite needs of one Argo CD release. Its methods call
// that release's code; none of them adds a check of its own.
type ArgoCD interface {
	// Module is the Argo CD module the adapter builds against, such as
	// github.com/argoproj/argo-cd/v2; its manifests/install.yaml is the
	// release's install manifest.
	Module() string
	// Serve reads the plugin.yaml in pluginDir (plugin.ReadPluginConfig),
	// starts the CMP server on it (cmpserver.NewServer, CreateGRPC) on the
	// unix socket its config names, and connects Argo CD's client to it. The
	// server's log goes to logs.
	Serve(pluginDir string, logs io.Writer) (Client, error)
	// ParametersEnviron is Argo CD's encoding of an Application's plugin
	// parameters into the plugin's environment
	// (v1alpha1.ApplicationSourcePluginParameters.Environ). A nil params is
	// a nil ApplicationSourcePluginParameters.
	ParametersEnviron(params []Parameter) ([]string, error)
	// SplitYAML parses a plugin's output the way the repo-server does
	// (gitops-engine kube.SplitYAML), into the objects' contents.
	SplitYAML(manifests []byte) ([]map[string]any, error)
	// Kustomize builds the kustomization in dir with the kustomize library
	// (krusty, default options, files on disk) and returns the resources'
	// contents.
	Kustomize(dir string) ([]map[string]any, error)
}

// Client is Argo CD's CMP client (cmpserver/apiclient), connected to the
// server Serve started.
type Client interface {
	MatchRepository(ctx context.Context) (Stream[RepositoryResponse], error)
	GenerateManifest(ctx context.Context) (Stream[ManifestResponse], error)
	GetParametersAnnouncement(ctx context.Context) (Stream[ParametersAnnouncementResponse], error)
	CheckPluginConfiguration(ctx context.Context) (CheckPluginConfigurationResponse, error)
	// Close closes the connection, then stops the server.
	Close() error
}

// Stream is a client stream of one of the CMP server's calls.
type Stream[R any] interface {
	// SendRepoStream sends the repository checked out at repoDir, with its
	// app at appDir and env, with Argo CD's util/cmp.SendRepoStream on the
	// stream's context.
	SendRepoStream(appDir, repoDir string, env []string) error
	// CloseAndRecv ends the stream and returns the server's response, which
	// is also filled in from a nil response.
	CloseAndRecv() (R, error)
}

// The responses carry the fields of Argo CD's responses the suite checks.
type (
	RepositoryResponse struct {
		IsSupported        bool
		IsDiscoveryEnabled bool
	}
	ManifestResponse struct {
		Manifests []string
	}
	ParametersAnnouncementResponse struct {
		ParameterAnnouncements []ParameterAnnouncement
	}
	ParameterAnnouncement struct {
		Name   string
		String string // String_
	}
	CheckPluginConfigurationResponse struct {
		IsDiscoveryConfigured bool
		ProvideGitCreds       bool
	}
)

// Plugin is an Application's plugin section (v1alpha1.ApplicationSourcePlugin).
type Plugin struct {
	Name       string
	Env        []EnvEntry
	Parameters []Parameter
}

// EnvEntry is one of plugin.env (v1alpha1.EnvEntry).
type EnvEntry struct {
	Name  string
	Value string
}

// Parameter is one of plugin.parameters
// (v1alpha1.ApplicationSourcePluginParameter); a nil String is a parameter
// named without a value.
type Parameter struct {
	Name   string
	String *string // String_
}
