# Builds the vc-syncer image: a static binary on distroless, running as a non-root user.
# The control-plane binaries used by tests are not part of it. `make verify` lints this file
# and runs the same `go build` command, checking that the binary is static
# (test/integration/deploy/dockerfile_test.go).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG GIT_COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w -X github.com/vcsyncer/syncer/pkg/version.Version=${VERSION} -X github.com/vcsyncer/syncer/pkg/version.GitCommit=${GIT_COMMIT}" -o /out/vc-syncer ./cmd/vc-syncer

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/vc-syncer /vc-syncer
USER 65532:65532
ENTRYPOINT ["/vc-syncer"]
CMD ["run"]
