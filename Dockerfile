# syntax=docker/dockerfile:1
# A static binary in a distroless, non-root image. Give the backends with
# REDLOCK_BACKENDS (or mount a config file and pass -config): started without
# any, the image refuses to run and says so, since its in-memory trial
# backends serve a loopback listener only (embedded_public overrides that).
#
# The container defaults (listen on all interfaces, metrics on 9121, JSON
# logs) are default *arguments*: they apply when you pass none, and any
# arguments you pass (such as -config /etc/redlock/config.yaml) replace them,
# so a mounted file's listen, http_listen and log_format count. Environment
# variables (REDLOCK_*) override a file; flags override both; an unknown
# REDLOCK_* variable is refused.
#
# Stamp a release: docker build --build-arg VERSION=v1.2.3 --build-arg COMMIT=$(git rev-parse HEAD) .
# (.git is not sent to the build, so the go command cannot read the commit.)
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG COMMIT=""
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags="-s -w -X github.com/redlock-proxy/redlock-proxy/internal/app.version=${VERSION} -X github.com/redlock-proxy/redlock-proxy/internal/app.commit=${COMMIT}" \
    -o /out/redlock-proxy .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/redlock-proxy /usr/local/bin/redlock-proxy
# Numeric, so that Kubernetes' runAsNonRoot can verify it (a name cannot be).
USER 65532:65532
EXPOSE 6380 9121
HEALTHCHECK --interval=10s --timeout=4s --start-period=5s \
    CMD ["/usr/local/bin/redlock-proxy", "-probe", "http://127.0.0.1:9121/readyz"]
ENTRYPOINT ["/usr/local/bin/redlock-proxy"]
CMD ["-listen", "0.0.0.0:6380", "-http-listen", "0.0.0.0:9121", "-log-format", "json"]
