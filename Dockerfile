# syntax=docker/dockerfile:1
# A static binary in a distroless, non-root image. Give the backends with
# REDLOCK_BACKENDS (or mount a config file and pass -config).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/redlock-proxy .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/redlock-proxy /usr/local/bin/redlock-proxy
USER nonroot:nonroot
ENV REDLOCK_LISTEN=0.0.0.0:6380 \
    REDLOCK_HTTP_LISTEN=0.0.0.0:9121 \
    REDLOCK_LOG_FORMAT=json
EXPOSE 6380 9121
HEALTHCHECK --interval=10s --timeout=4s --start-period=5s \
    CMD ["/usr/local/bin/redlock-proxy", "-probe", "http://127.0.0.1:9121/readyz"]
ENTRYPOINT ["/usr/local/bin/redlock-proxy"]
