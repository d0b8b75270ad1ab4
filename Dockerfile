# Builds the vc-syncer image. The control-plane binaries used by tests are not part of it.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/vc-syncer ./cmd/vc-syncer

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/vc-syncer /vc-syncer
USER 65532:65532
ENTRYPOINT ["/vc-syncer"]
CMD ["run"]
