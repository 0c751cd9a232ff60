# tenancy: render a GPU-sharing agreement into Kueue or KAI manifests.
#
#   make test    unit, golden and wrapper tests (kustomize and Argo CD end to end)
#   make e2e     the agreement in a real kube-apiserver + Kueue (builds them once, cached)
#   make bench   Go benchmarks and whole-process timings
#   make build   bin/tenancy

GO ?= go
# Third-party binaries built for tests are cached here, keyed by version.
export TENANCY_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/tenancy

.PHONY: all build test test-unit test-kustomize test-argocd e2e bench fuzz clean

all: build test

build:
	$(GO) build -trimpath -o bin/tenancy ./cmd/tenancy

test: test-unit test-kustomize test-argocd

test-unit:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

test-kustomize:
	cd test/kustomize && $(GO) test -count=1 ./...

test-argocd:
	cd test/argocd/v2 && $(GO) test -count=1 ./...
	cd test/argocd/v3 && $(GO) test -count=1 ./...

e2e:
	cd test/e2e && $(GO) test -v -count=1 -timeout 45m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./generator/
	$(GO) run ./test/bench

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzRender -fuzztime 60s ./generator/

clean:
	rm -rf bin
