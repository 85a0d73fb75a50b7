# syntax=docker/dockerfile:1
# Builds a static webapp-hook into a distroless, non-root image:
#   docker build -t ghcr.io/example/webapp-hook:dev .

FROM golang:1.26-bookworm AS build
# go1.26.8 has known vulnerabilities in net/http and crypto/tls; go.mod's toolchain line names the
# fixed release, which the go command fetches from the module proxy.
ENV GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0 GOFLAGS=-trimpath
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/root/go/pkg/mod go mod download
COPY api/ api/
COPY sync/ sync/
COPY webhook/ webhook/
COPY cmd/ cmd/
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -ldflags="-s -w" -o /out/webapp-hook ./cmd/webapp-hook

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/webapp-hook /webapp-hook
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/webapp-hook"]
