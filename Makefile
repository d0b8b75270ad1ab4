# vc-syncer. `make help` lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
# Integration and e2e suites start real control planes; 2 cores fit one package at a time.
TEST_P ?= 1
TEST_TIMEOUT ?= 40m
# Unit tests run in a random order (-shuffle) from this seed; a failing order is replayed with
# make test-unit SHUFFLE=<seed> (the seed is printed first; see docs/testing.md).
ifeq ($(origin SHUFFLE),undefined)
SHUFFLE := $(shell date +%s)
endif

.PHONY: help
help: ## Show this help.
	@grep -E '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-18s %s\n", $$1, $$2}'

.PHONY: build
build: ## Build bin/vc-syncer.
	$(GO) build -o bin/vc-syncer ./cmd/vc-syncer

.PHONY: tools
tools: ## Build (once, cached outside the repo) etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok, coredns, helm; npm dockerfile-utils.
	./hack/build-tools.sh

.PHONY: e2e-tools
e2e-tools: ## Build (once, cached beside the tools) the Kubernetes v1.37.2 e2e.test and the ginkgo CLI for the conformance tests (about 11 minutes cold, 154 MB).
	./hack/build-tools.sh e2e

.PHONY: conformance
conformance: e2e-tools ## The conformance subset against the super cluster, then a tenant of vc-syncer dev; writes docs/conformance/result.json and result.md.
	$(GO) run ./test/bench conformance --out bench-out/conformance --results docs/conformance

.PHONY: prometheus
prometheus: ## Install Prometheus (Debian package) for the dashboard test if it is missing.
	./hack/ensure-prometheus.sh

.PHONY: chromium
chromium: ## Install headless Chromium and chromedriver (Debian packages) if missing; the status-page test needs them.
	./hack/ensure-chromium.sh

.PHONY: test
test: tools e2e-tools prometheus chromium lint ## Everything: tools, lint (vet, golangci-lint), unit, integration (the conformance parity smoke among them) and the real-world e2e tests.
	@echo "unit tests: -shuffle=$(SHUFFLE) (replay an order: make test SHUFFLE=$(SHUFFLE))"
	$(GO) test -race -count=1 -shuffle=$(SHUFFLE) ./pkg/... ./cmd/...
	$(GO) test -count=1 -p $(TEST_P) -timeout $(TEST_TIMEOUT) ./test/... ./e2e/...

.PHONY: test-unit
test-unit: ## Fast loop: unit tests (twice each, in a random order; SHUFFLE=<seed> replays one) and the package-map check, no control planes.
	@echo "unit tests: -shuffle=$(SHUFFLE) (replay this order: make test-unit SHUFFLE=$(SHUFFLE))"
	$(GO) test -race -count=2 -shuffle=$(SHUFFLE) ./pkg/... ./cmd/... ./test/layering/

.PHONY: checkpoint-fixtures
checkpoint-fixtures: ## Write the checkpoint fixtures of the running schema (pkg/syncer/testdata/checkpoint/schema-<CheckpointSchema>.{ckpt,golden}) after a deliberate CheckpointSchema bump; earlier schemas' fixtures are kept. Refused when that schema's golden exists and differs (CHECKPOINT_FIXTURES_SAME_SCHEMA=1 overrides).
	$(GO) test -count=1 -run '^TestCheckpointSchemaGuard$$' ./pkg/syncer/ -args -update-checkpoint-fixtures
	$(GO) test -count=1 -run '^(TestCheckpointSchemaGuard|TestCheckpointFixturesResume)$$' ./pkg/syncer/

.PHONY: test-integration
test-integration: tools e2e-tools prometheus chromium ## Integration suites against real local control planes.
	$(GO) test -count=1 -p $(TEST_P) -timeout $(TEST_TIMEOUT) ./test/...

.PHONY: test-e2e
test-e2e: tools ## The whole binary against real control planes and the real-world manifests.
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -v ./e2e/...

.PHONY: bench
bench: tools ## Load-generator experiments (burst, greedy, fairness, memory) into bench-out/; restart and tenants run with go run ./test/bench restart|tenants; see docs/bench/README.md.
	$(GO) run ./test/bench burst --out bench-out/burst
	$(GO) run ./test/bench greedy --out bench-out/greedy
	$(GO) run ./test/bench fairness --out bench-out/fairness
	$(GO) run ./test/bench memory --out bench-out/memory

.PHONY: dev
dev: ## Run a local super cluster, 2 tenants and the syncer until Ctrl-C (hack/dev.sh).
	./hack/dev.sh --tenants 2

.PHONY: lint
lint: ## go vet, then golangci-lint v2.15.0 with the linters of .golangci.yml (built into the tools cache once).
	$(GO) vet ./...
	"$$(./hack/ensure-golangci-lint.sh)" run ./...

CONTROLLER_GEN ?= $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0

.PHONY: generate
generate: ## Regenerate the deepcopy code of pkg/apis (controller-gen).
	$(CONTROLLER_GEN) object paths=./pkg/apis/...

.PHONY: manifests
manifests: ## Regenerate the CRDs (config/crd/bases) and the syncer's Role and ClusterRole (config/rbac/role.yaml) from the +kubebuilder markers; refresh the chart's CRD copies.
	GENERATED=$(CURDIR) ./hack/manifests.sh
	$(MAKE) chart-crds

.PHONY: dashboard
dashboard: ## Regenerate the Grafana dashboard JSON (charts/) and its ConfigMap (config/grafana/) from pkg/metrics/dashboard.
	$(GO) run ./hack/gen-dashboard

.PHONY: docker-build
docker-build: ## Build the container image (needs a Docker engine).
	docker build -t vc-syncer:dev .

.PHONY: status-page-screenshot
status-page-screenshot: tools chromium ## Re-take docs/status-page.png in headless Chromium (runs the status-page test).
	VCSYNCER_STATUS_SCREENSHOT=docs/status-page.png $(GO) test -count=1 -run TestStatusPage ./test/integration/statuspage/

.PHONY: verify
verify: tools ## Generated code and manifests up to date, chart vs config/ drift, helm lint, chart flags, CRD copy, Dockerfile lint and static build.
	./hack/verify-generated.sh
	$(GO) test -count=1 -run '^TestVerify' ./test/integration/deploy/

.PHONY: chart-crds
chart-crds: ## Copy config/crd/bases (the source of truth) into charts/vc-syncer/crds.
	cp config/crd/bases/*.yaml charts/vc-syncer/crds/

test: verify
