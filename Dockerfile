# syntax=docker/dockerfile:1
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/redlock-proxy .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/redlock-proxy /usr/local/bin/redlock-proxy
USER nonroot:nonroot
ENV REDLOCK_LISTEN=0.0.0.0:6380
EXPOSE 6380
ENTRYPOINT ["/usr/local/bin/redlock-proxy"]
