# One command per task. Go 1.26.8 has known vulnerabilities in net/http and crypto/tls;
# go1.27.3 fixes them and the go command fetches it from the module proxy.
export GOTOOLCHAIN := go1.27.3

IMAGE ?= ghcr.io/example/webapp-hook:dev
# Where `make image` writes the OCI layout (layout/), the OCI archive (webapp-hook.tar) and the
# index digest (digest); git-ignored.
IMAGE_DIR ?= bin/image
# The notifier's image (metacontroller/notifications, docs/notifications.md), which `make image`
# builds too: its layout, its archive (webapp-notifier.tar) and its digest in NOTIFIER_IMAGE_DIR.
NOTIFIER_IMAGE ?= ghcr.io/example/webapp-notifier:dev
NOTIFIER_IMAGE_DIR ?= $(IMAGE_DIR)/webapp-notifier
PLATFORMS ?= linux/amd64,linux/arm64
# Extra skopeo copy flags for image-push, e.g. --dest-creds or --dest-tls-verify=false.
PUSH_FLAGS ?=
FUZZTIME ?= 60s
# Where `make chart` writes the packaged chart (git-ignored), and the OCI repository `make
# chart-push` pushes it to: REGISTRY=oci://registry.example.com/charts.
CHART_DIR ?= bin/chart
CHART_VERSION := $(shell awk '$$1 == "version:" {print $$2; exit}' charts/webapp-operator/Chart.yaml)
REGISTRY ?=
# Extra helm push flags, e.g. --plain-http for a registry without TLS (credentials: helm registry login).
CHART_PUSH_FLAGS ?=
# The version make plugin stamps into kubectl-webapp and its Krew manifest: the commit's tag (v and
# a semantic version, as Krew wants), or v0.0.0-dev.g<commit> between releases; and the URL its
# archives are published at, which the manifest names.
PLUGIN_VERSION ?= $(shell git describe --tags --exact-match --match 'v*' 2>/dev/null || echo v0.0.0-dev.g$$(git rev-parse --short=12 HEAD))
PLUGIN_URL ?= https://github.com/example/webapp-operator/releases/download/$(PLUGIN_VERSION)

.PHONY: notifier-image-push notifications-e2e release-e2e plugin plugin-e2e helm chart chart-push chart-test policy-test scale rotate-token rotate-ca soak vuln fuzz-smoke run build verify-generate test e2e kube-binaries node-binaries gateway-binaries gateway-test gateway-e2e analysis-e2e promotions fuzz bench bench-smoke load generate image image-push image-test docker-image deploy

## run: serve the hooks on :8080
run:
	go run ./cmd/webapp-hook

## build: bin/webapp-hook, stamped with the VCS revision that --version prints
build:
	go build -buildvcs=true -o bin/webapp-hook ./cmd/webapp-hook

## verify-generate: fail when crds/ is not what `go generate` makes from api/v1
verify-generate: generate
	@changes=$$(git status --porcelain -- crds/); if [ -n "$$changes" ]; then \
		echo "crds/ differs from what go generate makes from api/v1; run make generate and commit:"; \
		echo "$$changes"; git --no-pager diff -- crds/; exit 1; fi

## test: vet, then every test with the race detector; the notifier too, a module of its own
test:
	go vet ./...
	go test -race ./...
	go -C cmd/webapp-notifier vet ./...
	go -C cmd/webapp-notifier test -race ./...

## e2e: the end-to-end suite against etcd, kube-apiserver, kube-controller-manager,
## kube-scheduler and kwok built from source into bin/, and a real node (kubelet, containerd,
## runc) beside the kwok one, Traefik as the Gateway API controller and Prometheus for the canary
## analysis (the suite itself about 16 minutes on a quiet machine, 9 of them TestAnalysis's, before
## issue 42's proofs added about 4 to TestAnalysis and issue 43's about 3; 27 beside another build,
## hence a 50-minute bound; -parallel 5 for TestAnalysis's proofs that run side by side)
e2e: kube-binaries node-binaries gateway-binaries
	go test -tags e2e -count=1 -parallel 5 -timeout 50m ./e2e/...

## kube-binaries: the control plane, kwok, kubectl and helm into bin/ (hack/kube-binaries.sh)
kube-binaries:
	bash hack/kube-binaries.sh

## node-binaries: the real node's kubelet, containerd, CNI plugins, images and registry in bin/,
## from source (hack/node-binaries.sh; about 8 minutes the first time), and runc from Debian
node-binaries:
	bash hack/node-binaries.sh

## gateway-binaries: bin/traefik (Traefik v3) and bin/prometheus (Prometheus 3) from source through
## the Go module proxy, for the canary's analysis through a real Gateway (hack/traefik.sh,
## hack/prometheus.sh; 30 CPU-minutes the first time, seconds once in the cache outside the
## checkout)
gateway-binaries:
	bash hack/traefik.sh
	bash hack/prometheus.sh

## gateway-test: requests through bin/traefik to a backend on loopback, counted back from
## bin/prometheus's HTTP API (hack/gateway; no Kubernetes)
gateway-test: gateway-binaries
	cd hack/gateway && go vet ./... && go test -count=1 -v -timeout 5m ./...

## gateway-e2e: TestTraefikGateway alone (make e2e runs it too): bin/traefik as the Gateway API
## controller of the e2e cluster, routing to the test app's pods on the real node, and a canary
## split 50/50 through it with no failed request
gateway-e2e: kube-binaries node-binaries gateway-binaries
	go test -tags e2e -count=1 -run '^TestTraefikGateway$$' -timeout 15m -v ./e2e/

## analysis-e2e: TestAnalysis alone (make e2e runs it too): issue 36's canary analysis, its proofs
## 1 to 7, issue 42's judge of it, proofs 8 to 12, and issue 43's edge, proofs 13 to 15, under the
## real Metacontroller with the hook given bin/prometheus (--prometheus-url, through a proxy of the
## test's that proof 15 makes slow), which scrapes bin/traefik every second, the test app's pods on
## the real node and clients sending requests through Traefik the whole time (about 16 minutes;
## -parallel 5 runs proofs 9 to 12 side by side, then 13 and 14); the timelines, as Markdown, in
## bin/e2e-analysis.md
analysis-e2e: kube-binaries node-binaries gateway-binaries
	go test -tags e2e -count=1 -run '^TestAnalysis$$' -parallel 5 -timeout 40m -v ./e2e/

## plugin-e2e: TestPlugin alone (make e2e runs it too): kubectl webapp, built from cmd/kubectl-webapp,
## run as users bound to webapp-edit alone, webapp-view alone, and edit with view, under the real
## Metacontroller with the admission policy (about 3 minutes); E2E_RECORD_SCREENS=1 writes the
## golden screens' stories to plugin/testdata/recorded (then go test ./plugin/screen -update), and
## bin/e2e-plugin.md gets the screens, for docs/kubectl-plugin.md
plugin-e2e: kube-binaries
	go test -tags e2e -count=1 -run '^TestPlugin$$' -timeout 20m -v ./e2e/

## notifications-e2e: TestNotifications alone (make e2e runs it too): issue 44's notifier, built
## from cmd/webapp-notifier and run with its ServiceAccount's token and the roles of
## metacontroller/notifications, under the real Metacontroller, with webhook and Slack receivers
## on loopback: a canary's life, a receiver down 30 s, a webapp-edit tenant, the notifier killed
## mid-canary, and no hook call while idle (about 2.5 minutes)
notifications-e2e: kube-binaries
	go test -tags e2e -count=1 -run '^TestNotifications$$' -timeout 15m -v ./e2e/

## release-e2e: TestRelease alone (make e2e runs it too): issue 45's header route, rollback window
## and blue-green through Traefik, under load counted by version, its subtests side by side
release-e2e: kube-binaries node-binaries gateway-binaries
	go test -tags e2e -count=1 -run '^TestRelease$$' -parallel 5 -timeout 20m -v ./e2e/

## promotions: TestPromotions alone: PROMOTIONS canaries (default 10) promoted in a row through
## Traefik, the pods on the real node, with clients sending requests the whole time; fails on any
## request that does not get a 200, and shows what happened around it (opt-in, not in CI: about
## 20 s a promotion). E2E_SHUTDOWN_DELAY=5 sets the WebApp's spec.shutdownDelaySeconds (none by
## default: the hook's own SHUTDOWN_DELAY must not be set by make).
PROMOTIONS ?= 10
promotions: kube-binaries node-binaries gateway-binaries
	E2E_PROMOTIONS=$(PROMOTIONS) go test -tags e2e -count=1 -run '^TestPromotions$$' -timeout 60m -v ./e2e/

## plugin: kubectl-webapp for linux, darwin and windows on amd64 and arm64 into bin/plugin/, each in a
## tar.gz with its sha256 (bin/plugin/sha256sums.txt), PLUGIN_VERSION stamped (hack/plugin.sh); the
## Krew manifest plugins/webapp.yaml filled with those sums from its template, then checked against
## the archives (plugins/manifest_test.go)
plugin:
	PLUGIN_VERSION=$(PLUGIN_VERSION) PLUGIN_URL=$(PLUGIN_URL) bash hack/plugin.sh
	go test -count=1 -run '^TestManifest$$' ./plugins -krew

## helm: bin/helm, the Helm CLI built from the Go module proxy at a pinned version (hack/helm.sh)
helm:
	bash hack/helm.sh

## chart: lint charts/webapp-operator, then package it into CHART_DIR (bin/chart/)
chart: helm
	bin/helm lint --strict charts/webapp-operator
	bin/helm package charts/webapp-operator --destination $(CHART_DIR)

## chart-push: push the packaged chart to REGISTRY (oci://host/path) as an OCI artifact with helm
## push; it prints the digest (credentials: bin/helm registry login)
chart-push: chart
	@test -n "$(REGISTRY)" || { echo "make chart-push needs REGISTRY=oci://registry.example.com/charts"; exit 2; }
	bin/helm push $(CHART_DIR)/webapp-operator-$(CHART_VERSION).tgz $(REGISTRY) $(CHART_PUSH_FLAGS)

## chart-test: make chart-push to a registry on loopback, then pull the chart back (hack/chart)
chart-test: helm
	cd hack/chart && go vet ./... && go test -count=1 -v -timeout 10m ./...

## policy-test: the admission policy of metacontroller/base/policy.yaml compiled and run offline by
## the apiserver's own code (hack/policy)
policy-test:
	cd hack/policy && go vet ./... && go test -count=1 -timeout 10m ./...

## scale: the scale benchmark under the real Metacontroller, one run per mode of SCALE_MODES (as
## shipped, without customize, with routes, a canary mid-way, its analysis, a slow Prometheus, the
## notifier: docs/performance.md), N WebApps (default 300); BACKGROUND=1 adds 2,000 other pods and
## 200 Secrets of 100 KB
N ?= 300
scale: kube-binaries
	E2E_SCALE_N=$(N) SCALE_BACKGROUND=$(BACKGROUND) go test -tags e2e -count=1 -run '^TestScale$$' -timeout 150m -v ./e2e/

## fuzz: fuzz the decision and the HTTP handler, FUZZTIME each
fuzz:
	go test ./sync -run '^$$' -fuzz FuzzDecide -fuzztime $(FUZZTIME)
	go test ./webhook -run '^$$' -fuzz FuzzHandler -fuzztime $(FUZZTIME)

## fuzz-smoke: both fuzz targets for 10 s each (CI runs it)
fuzz-smoke:
	$(MAKE) fuzz FUZZTIME=10s

## soak: 60 s at full load with every request different; RSS may grow at most 10%
soak:
	bash bench/soak.sh

## vuln: govulncheck against a database built offline from golang.org/x/vulndb (CI runs it)
vuln:
	bash hack/govulncheck.sh

## bench: Go benchmarks of the decision and the whole handler
bench:
	go test ./sync/... ./webhook -run '^$$' -bench . -benchmem

## bench-smoke: every Go benchmark, 100 iterations, so that none rots (CI runs it)
bench-smoke:
	go test ./sync/... ./webhook -run '^$$' -bench . -benchtime 100x

## load: the hook against a limit server under wrk, with the ratios (bench/load.sh)
load:
	bash bench/load.sh

## generate: regenerate crds/ from the API types in api/v1
generate:
	go generate ./...

## image: the hook's OCI image for PLATFORMS, with no Docker engine and no base image
## (hack/image): IMAGE_DIR/webapp-hook.tar (OCI archive: kind load image-archive, skopeo),
## IMAGE_DIR/layout/ (OCI layout) and IMAGE_DIR/digest; one commit always gives one digest.
## Then the notifier's, NOTIFIER_IMAGE, the same way into NOTIFIER_IMAGE_DIR (webapp-notifier.tar)
image:
	go run -C hack/image . -repo "$(CURDIR)" -image "$(IMAGE)" -out "$(abspath $(IMAGE_DIR))" -platforms "$(PLATFORMS)"
	go run -C hack/image . -repo "$(CURDIR)" -binary webapp-notifier -image "$(NOTIFIER_IMAGE)" -out "$(abspath $(NOTIFIER_IMAGE_DIR))" -platforms "$(PLATFORMS)"

## image-push: push the image as built to IMAGE (registry/name:tag) with skopeo, every platform,
## its digest kept (credentials: skopeo login, or PUSH_FLAGS=--dest-creds=USER:TOKEN)
image-push: image
	bash hack/container-tools.sh skopeo
	skopeo copy --all --preserve-digests $(PUSH_FLAGS) "oci-archive:$(IMAGE_DIR)/webapp-hook.tar" "docker://$(IMAGE)"
	@echo "pushed $(IMAGE) at $$(cat $(IMAGE_DIR)/digest)"

## notifier-image-push: push the notifier's image as built to NOTIFIER_IMAGE, as image-push does the hook's
notifier-image-push: image
	bash hack/container-tools.sh skopeo
	skopeo copy --all --preserve-digests $(PUSH_FLAGS) "oci-archive:$(NOTIFIER_IMAGE_DIR)/webapp-notifier.tar" "docker://$(NOTIFIER_IMAGE)"
	@echo "pushed $(NOTIFIER_IMAGE) at $$(cat $(NOTIFIER_IMAGE_DIR)/digest)"

## image-test: build the images, then prove them: the same digests from a second build, their
## contents, the hook's against the Dockerfile, a push to a registry on loopback, and the hook's
## image run under runc as its user, read-only, with no capabilities (installs runc, umoci,
## skopeo from Debian)
image-test: image
	bash hack/container-tools.sh
	cd hack/image && go vet -tags image ./... && \
		WEBAPP_IMAGE_DIR="$(abspath $(IMAGE_DIR))" WEBAPP_NOTIFIER_IMAGE_DIR="$(abspath $(NOTIFIER_IMAGE_DIR))" go test -tags image -count=1 -v -timeout 15m ./...

## docker-image: the same image from the Dockerfile, for those with a Docker engine
docker-image:
	docker build $$(go run -C hack/image . -repo "$(CURDIR)" -docker-build-args) -t $(IMAGE) .

## rotate-token: give Metacontroller a new bearer token with no failed call (hack/rotate-token.sh)
rotate-token:
	bash hack/rotate-token.sh

## rotate-ca: move the hook to a certificate from a new CA with no failed call;
## CA_CERT, TLS_CERT and TLS_KEY name the new files (hack/rotate-ca.sh)
rotate-ca:
	bash hack/rotate-ca.sh

## deploy: install the CRD, the hook and the CompositeController on the current cluster
deploy:
	kubectl apply -k metacontroller/
