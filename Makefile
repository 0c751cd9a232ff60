# tenancy: render a GPU-sharing agreement into Kueue or KAI manifests.
#
#   make test    unit, golden and wrapper tests (kustomize and Argo CD end to end)
#   make e2e     the agreement in a real kube-apiserver + Kueue (builds them once, cached)
#   make bench   Go benchmarks and whole-process timings
#   make build   bin/tenancy

GO ?= go
# Third-party binaries built for tests are cached here, keyed by version.
export TENANCY_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/tenancy

.PHONY: all build taplo test test-unit test-kustomize test-argocd e2e bench fuzz clean

all: build test

build:
	$(GO) build -trimpath -o bin/tenancy ./cmd/tenancy

test: test-unit test-kustomize test-argocd

# Taplo (the engine of Even Better TOML) checks the JSON Schema the way
# editors use it. It comes from npm; without npm its test is skipped.
TAPLO_DIR := $(TENANCY_CACHE)/taplo-cli-0.7.0
TAPLO_BIN := $(TAPLO_DIR)/node_modules/.bin/taplo

taplo:
	@if [ ! -x "$(TAPLO_BIN)" ] && command -v npm >/dev/null; then \
		npm install --prefix "$(TAPLO_DIR)" --no-audit --no-fund --loglevel=error @taplo/cli@0.7.0 \
		|| echo "taplo: npm install failed; the Taplo schema test will be skipped"; \
	fi

test-unit: taplo
	$(GO) vet ./...
	TAPLO="$$( [ -x "$(TAPLO_BIN)" ] && echo "$(TAPLO_BIN)" )" $(GO) test -count=1 ./...

test-kustomize:
	cd test/kustomize && $(GO) test -count=1 ./...

test-argocd:
	cd test/argocd/cmpsuite && $(GO) vet ./...
	cd test/argocd/v2 && $(GO) test -count=1 ./...
	cd test/argocd/v3 && $(GO) test -count=1 ./...

e2e:
	cd test/e2e && $(GO) test -v -count=1 -timeout 75m .

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./generator/
	$(GO) run ./test/bench

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzRender -fuzztime 60s ./generator/

clean:
	rm -rf bin
