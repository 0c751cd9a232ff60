package argocd_test

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	log "github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/argoproj/argo-cd/v3/cmpserver"
	"github.com/argoproj/argo-cd/v3/cmpserver/apiclient"
	"github.com/argoproj/argo-cd/v3/cmpserver/plugin"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	argocmp "github.com/argoproj/argo-cd/v3/util/cmp"

	"github.com/tenancy-dev/tenancy/test/argocd/cmpsuite"
)

// This adapter is written once, here in test/argocd/v2: test/argocd/v3's is
// this file with Argo CD's module path changed, and a test there fails when
// the two differ otherwise. Edit v2's, then regenerate v3's with
//
//	cd test/argocd/v3 && go test -run TestAdapterIsV2sWithV3Imports -update

// argoCD runs the suite against the Argo CD release this module requires.
type argoCD struct{}

var _ cmpsuite.ArgoCD = argoCD{}

func (argoCD) Module() string { return "github.com/argoproj/argo-cd/v3" }

func (argoCD) Serve(pluginDir string, logs io.Writer) (cmpsuite.Client, error) {
	log.SetOutput(logs)
	cfg, err := plugin.ReadPluginConfig(pluginDir)
	if err != nil {
		return nil, fmt.Errorf("read argocd/plugin.yaml: %w", err)
	}
	srv, err := cmpserver.NewServer(plugin.CMPServerInitConstants{PluginConfig: *cfg})
	if err != nil {
		return nil, err
	}
	grpcServer, err := srv.CreateGRPC()
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("unix", cfg.Address())
	if err != nil {
		return nil, err
	}
	go grpcServer.Serve(lis)

	conn, c, err := apiclient.NewConfigManagementPluginClientSet(cfg.Address()).NewConfigManagementPluginClient()
	if err != nil {
		grpcServer.Stop()
		return nil, err
	}
	return client{c: c, conn: conn, server: grpcServer}, nil
}

// client is Argo CD's CMP client; the responses keep what the suite checks.
type client struct {
	c      apiclient.ConfigManagementPluginServiceClient
	conn   io.Closer
	server *grpc.Server
}

func (c client) MatchRepository(ctx context.Context) (cmpsuite.Stream[cmpsuite.RepositoryResponse], error) {
	s, err := c.c.MatchRepository(ctx)
	if err != nil {
		return nil, err
	}
	return stream[*apiclient.RepositoryResponse, cmpsuite.RepositoryResponse]{s, func(r *apiclient.RepositoryResponse) cmpsuite.RepositoryResponse {
		return cmpsuite.RepositoryResponse{IsSupported: r.GetIsSupported(), IsDiscoveryEnabled: r.GetIsDiscoveryEnabled()}
	}}, nil
}

func (c client) GenerateManifest(ctx context.Context) (cmpsuite.Stream[cmpsuite.ManifestResponse], error) {
	s, err := c.c.GenerateManifest(ctx)
	if err != nil {
		return nil, err
	}
	return stream[*apiclient.ManifestResponse, cmpsuite.ManifestResponse]{s, func(r *apiclient.ManifestResponse) cmpsuite.ManifestResponse {
		return cmpsuite.ManifestResponse{Manifests: r.GetManifests()}
	}}, nil
}

func (c client) GetParametersAnnouncement(ctx context.Context) (cmpsuite.Stream[cmpsuite.ParametersAnnouncementResponse], error) {
	s, err := c.c.GetParametersAnnouncement(ctx)
	if err != nil {
		return nil, err
	}
	return stream[*apiclient.ParametersAnnouncementResponse, cmpsuite.ParametersAnnouncementResponse]{s, func(r *apiclient.ParametersAnnouncementResponse) cmpsuite.ParametersAnnouncementResponse {
		var out cmpsuite.ParametersAnnouncementResponse
		for _, p := range r.GetParameterAnnouncements() {
			out.ParameterAnnouncements = append(out.ParameterAnnouncements, cmpsuite.ParameterAnnouncement{Name: p.Name, String: p.String_})
		}
		return out
	}}, nil
}

func (c client) CheckPluginConfiguration(ctx context.Context) (cmpsuite.CheckPluginConfigurationResponse, error) {
	r, err := c.c.CheckPluginConfiguration(ctx, &emptypb.Empty{})
	return cmpsuite.CheckPluginConfigurationResponse{IsDiscoveryConfigured: r.GetIsDiscoveryConfigured(), ProvideGitCreds: r.GetProvideGitCreds()}, err
}

func (c client) Close() error {
	err := c.conn.Close()
	c.server.Stop()
	return err
}

// stream is one of the client's streams, R its response.
type stream[R, T any] struct {
	s interface {
		argocmp.StreamSender
		Context() context.Context
		CloseAndRecv() (R, error)
	}
	response func(R) T
}

func (s stream[R, T]) SendRepoStream(appDir, repoDir string, env []string) error {
	return argocmp.SendRepoStream(s.s.Context(), appDir, repoDir, s.s, env, nil)
}

func (s stream[R, T]) CloseAndRecv() (T, error) {
	r, err := s.s.CloseAndRecv()
	return s.response(r), err
}

func (argoCD) ParametersEnviron(params []cmpsuite.Parameter) ([]string, error) {
	var ps v1alpha1.ApplicationSourcePluginParameters // nil without parameters
	for _, p := range params {
		ps = append(ps, v1alpha1.ApplicationSourcePluginParameter{Name: p.Name, String_: p.String})
	}
	return ps.Environ()
}

func (argoCD) SplitYAML(manifests []byte) ([]map[string]any, error) {
	objs, err := kube.SplitYAML(manifests)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, o := range objs {
		out = append(out, o.Object)
	}
	return out, nil
}

func (argoCD) Kustomize(dir string) ([]map[string]any, error) {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, r := range resources.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
