# syntax=docker/dockerfile:1
# The hook's image, for those with a Docker engine. `make image` builds the same image with none
# (hack/image, no base image); `make image-test` checks that this file's final stage and that
# image agree: user, entrypoint, command, ports, label names and files. Both hold the static
# binary alone, stamped with the commit as --version reports it:
#   make docker-image IMAGE=ghcr.io/example/webapp-hook:dev
#   docker buildx build --platform linux/amd64,linux/arm64 $(go -C hack/image run . -docker-build-args) -t IMAGE .

FROM --platform=$BUILDPLATFORM golang:1.27-bookworm AS build
# go1.27.3 fixes known vulnerabilities of go1.26.8 in net/http and crypto/tls, and is the
# toolchain hack/image builds with; the flags are hack/image's too.
ENV GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOAMD64=v1 GOARM64=v8.0
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/root/go/pkg/mod go mod download
COPY api/ api/
COPY analysis/ analysis/
COPY canary/ canary/
COPY internal/ internal/
COPY sync/ sync/
COPY webhook/ webhook/
COPY cmd/ cmd/
ARG TARGETOS TARGETARCH VERSION REVISION CREATED MODIFIED=false
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build \
      -ldflags="-s -w -X main.buildVersion=${VERSION} -X main.buildRevision=${REVISION} -X main.buildTime=${CREATED} -X main.buildModified=${MODIFIED}" \
      -o /out/webapp-hook ./cmd/webapp-hook

FROM scratch
ARG VERSION REVISION CREATED SOURCE=https://github.com/example/webapp-operator
LABEL org.opencontainers.image.title=webapp-hook \
      org.opencontainers.image.source=${SOURCE} \
      org.opencontainers.image.revision=${REVISION} \
      org.opencontainers.image.version=${VERSION} \
      org.opencontainers.image.created=${CREATED}
COPY --from=build /out/webapp-hook /webapp-hook
USER 65532:65532
EXPOSE 8080/tcp 9090/tcp
ENTRYPOINT ["/webapp-hook"]
