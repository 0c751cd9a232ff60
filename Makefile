# tenancy: render a GPU-sharing agreement into Kueue or KAI manifests.
#
#   make test    unit, golden and wrapper tests (kustomize and Argo CD end to end)
#   make e2e     the agreement in a real kube-apiserver + Kueue, a fleet of three through
#                MultiKueue, explain --contention against Kueue's admissions, the monitoring rules and tenancy report with real Prometheus
#                and promtool, and the KAI render in the real KAI Scheduler built from
#                ../shared/src (builds them once, cached)
#   make e2e-argocd  the Argo CD loop: a commit to tenancy.toml synced by Argo CD
#   make bench   Go benchmarks and whole-process timings
#   make fuzz    every fuzz target for FUZZTIME each (make fuzz FUZZTIME=10m)
#   make build   bin/tenancy
#   make images  bin/tenancy-argocd.oci.tar, bin/tenancy-kustomize.oci.tar (no container engine needed)

GO ?= go
# Third-party binaries built for tests are cached here, keyed by version.
export TENANCY_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/tenancy

.PHONY: all build images taplo skipreport staticcheck test test-unit test-kustomize test-argocd test-images test-fuzz e2e e2e-argocd bench fuzz clean

all: build test

build:
	$(GO) build -trimpath -o bin/tenancy ./cmd/tenancy

# images builds both container images with go-containerregistry (a static Go
# binary needs no base image) into OCI layout tarballs, and prints their
# digests for the release steps (docs/argocd.md).
VERSION ?= dev

images:
	cd test/images && $(GO) run . -out ../../bin -version $(VERSION)

# test-images checks the images' config and runs their binaries read-only as
# their users with bwrap (Debian's bubblewrap; without it those runs are
# skipped, saying so).
test-images: skipreport
	cd test/images && $(SKIPREPORT) $(GO) test -json -count=1 ./...

# The go test runs of make test go through test/skipreport: it prints what
# plain go test would, then a line per skipped test with its reason, and
# keeps go test's exit code. make test ends with all of them (SKIPS).
SKIPS := $(CURDIR)/bin/test-skips.txt
SKIPREPORT := $(CURDIR)/bin/skipreport -record $(SKIPS)

skipreport:
	@mkdir -p bin
	$(GO) build -o bin/skipreport ./test/skipreport

test:
	@rm -f $(SKIPS)
	@$(MAKE) --no-print-directory test-unit test-kustomize test-argocd test-images test-fuzz staticcheck
	@bin/skipreport -summary $(SKIPS)

# Taplo (the engine of Even Better TOML) checks the JSON Schema the way
# editors use it. It comes from npm; without npm its test is skipped.
TAPLO_DIR := $(TENANCY_CACHE)/taplo-cli-0.7.0
TAPLO_BIN := $(TAPLO_DIR)/node_modules/.bin/taplo

taplo:
	@if [ ! -x "$(TAPLO_BIN)" ] && command -v npm >/dev/null; then \
		npm install --prefix "$(TAPLO_DIR)" --no-audit --no-fund --loglevel=error @taplo/cli@0.7.0 \
		|| echo "taplo: npm install failed; the Taplo schema test will be skipped"; \
	fi

test-unit: taplo skipreport
	$(GO) vet ./...
	TAPLO="$$( [ -x "$(TAPLO_BIN)" ] && echo "$(TAPLO_BIN)" )" $(SKIPREPORT) $(GO) test -json -count=1 ./...

test-kustomize: skipreport
	cd test/kustomize && $(SKIPREPORT) $(GO) test -json -count=1 ./...

test-argocd: skipreport
	cd test/argocd/cmpsuite && $(GO) vet ./...
	cd test/argocd/v2 && $(SKIPREPORT) $(GO) test -json -count=1 ./...
	cd test/argocd/v3 && $(SKIPREPORT) $(GO) test -json -count=1 ./...

# e2e runs three test binaries at a time (-p 3): the KAI suite has a control
# plane of its own and shares nothing with the Kueue one, so it runs beside
# the control-plane package and the fleet suite, and the warm run takes
# about as long as the KAI suite; go test still prints each package's
# output whole, in order.
# go test starts the packages in the order listed, so the KAI suite, the
# longest, comes first: the control-plane package then the monitoring one
# run beside it, and the run takes about as long as the KAI suite alone
# instead of the monitoring package plus the KAI suite.
# e2e-binaries first builds every third-party binary the packages use, one
# after the other: built by the packages themselves under -p 3, three cold
# builds would compete for the 2 cores and each takes three times as long.
# ./multikueue/ is the fleet (issue 29): three control planes of its own (a
# MultiKueue manager and two workers), about two and a half minutes. -p 3
# runs it beside the two long suites from the start: the KAI suite is
# bounded by its scheduler's one-second cycles more than by the cores
# (1.6 of 2 busy on average), so the run stays as long as the KAI suite
# (12 min 42 s measured, against 14 min with -p 2 and the fleet suite
# waiting for a slot).
# ./kaipools/ is KAI's node pools (issue 30): a KAI control plane of its own
# with a scheduler per pool, about a minute and a half, started third so
# that it runs beside the two long suites instead of lengthening the KAI
# suite.
# ./contention/kai/ is the proof that explain --contention's KAI numbers are
# KAI's (issue 31): a KAI control plane of its own, a few minutes, so it
# takes the fleet suite's slot when that ends, beside the KAI suite.
# ./contention/kueue/ proves explain --contention against the real Kueue
# (issue 31): a control plane of its own, about three minutes, so it runs
# beside the long suites too.
# ./internal/controlplane/ is one check of seconds: a killed test process
# leaves no etcd or kube-apiserver behind (docs/decisions.md, envtest).
e2e:
	cd test/e2e && $(GO) run ./cmd/e2e-binaries
	cd test/e2e && $(GO) test -v -count=1 -p 3 -timeout 75m ./kai/ . ./kaipools/ ./multikueue/ ./contention/kueue/ ./contention/kai/ ./monitoring/ ./internal/controlplane/

# e2e-argocd is the GitOps loop: Argo CD's application controller,
# repo-server and CMP server (built once, cached) syncing tenancy.toml from a
# local Git server into the control plane. Its own target so that make e2e
# keeps its time budget; needs redis-server (Debian's package). Runs Argo CD
# v3 (the newest that builds here), then v2.14.
e2e-argocd:
	cd test/e2e && $(GO) test -v -count=1 -timeout 75m ./argocd
	cd test/e2e && TENANCY_ARGOCD=v2 $(GO) test -v -count=1 -timeout 75m ./argocd

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./generator/
	$(GO) run ./test/bench

# staticcheck (honnef.co/go/tools, pinned as a tool in test/tools/go.mod, so
# the root module's dependencies stay the product's) on every module of the
# repository, found by their go.mod so that a new one is not left out. The
# modules under test/e2e/tools hold only go.mod: nothing to check there.
MODULE_DIRS := $(sort $(dir $(shell find . -name go.mod -not -path './bin/*')))

staticcheck:
	@mkdir -p bin
	$(GO) -C test/tools build -o $(CURDIR)/bin/staticcheck honnef.co/go/tools/cmd/staticcheck
	@for m in $(MODULE_DIRS); do \
		pkgs=$$(cd $$m && $(GO) list ./... 2>&1) || { echo "$$pkgs" >&2; exit 1; }; \
		case "$$pkgs" in *'matched no packages'*) continue;; esac; \
		echo "cd $$m && staticcheck ./..."; \
		(cd $$m && $(CURDIR)/bin/staticcheck ./...) || exit 1; \
	done

# FUZZTIME is how long make fuzz runs each fuzz target.
FUZZTIME ?= 60s

# fuzz runs every fuzz target in the repository, found by grep so that a new
# one is not left out, one at a time: go test -fuzz takes one package and a
# pattern matching exactly one target, and an unanchored FuzzRender would also
# match FuzzRenderNumbers. Running in the test file's directory works for the
# root module and the modules under test/ alike. Only an input that fails is
# written to testdata/fuzz (commit it as a regression seed); the rest of the
# corpus stays in the Go build cache.
fuzz:
	@targets=$$(grep -rHo --include='*_test.go' '^func Fuzz[[:alnum:]_]*' . | sed 's/:func /:/' | sort); \
	if [ -z "$$targets" ]; then echo "make fuzz: no func Fuzz... found" >&2; exit 1; fi; \
	for t in $$targets; do \
		dir=$$(dirname "$${t%%:*}"); name=$${t#*:}; \
		echo "cd $$dir && $(GO) test -run '^\$$' -fuzz '^$$name\$$' -fuzztime $(FUZZTIME) ."; \
		(cd "$$dir" && $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) .) || exit 1; \
	done

# test-fuzz fuzzes each target for a few hundred inputs, so that make test
# notices when make fuzz breaks (a pattern matching two targets, a target that
# does not build with -fuzz), not only when a seed fails as go test ./... does.
# It counts executions instead of seconds: Go 1.26's fuzz coordinator can
# report its own -fuzztime deadline as a failure ("context deadline exceeded",
# golang/go#75804, fixed in Go 1.27) when a worker is mid-input as the clock
# runs out, which CI hit on FuzzRender; a count has no deadline to race.
test-fuzz:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=200x

clean:
	rm -rf bin
