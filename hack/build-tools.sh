#!/usr/bin/env bash
# Builds the real control-plane binaries that tests, benchmarks and `vc-syncer dev` run:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok and coredns (and helm), from Go
# modules pinned in hack/tools/*/go.mod, into a cache outside the repository keyed by version:
#
#   ${VCSYNCER_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vc-syncer/k8s-v1.37.2-etcd-v3.7.3-kwok-v0.8.0}
#
# A binary already in the cache is not rebuilt, so a second run takes seconds. A fresh machine
# builds everything once (about 16 minutes on 2 cores, helm and CoreDNS included). Prints the cache directory on the last line.
#
# `hack/build-tools.sh runtime` builds only what control planes need at run time (what
# `vc-syncer dev`, the tests and the benchmarks start through pkg/localcluster), not helm or the npm Dockerfile linter.
# `hack/build-tools.sh e2e` builds those and the conformance tests' e2e.test and ginkgo.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K8S=v1.37.2 ETCD=v3.7.3 KWOK=v0.8.0
DIR=${VCSYNCER_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vc-syncer/k8s-$K8S-etcd-$ETCD-kwok-$KWOK}
mkdir -p "$DIR/bin"
start=$(date +%s)
log() { echo "[tools +$(( $(date +%s) - start ))s] $*" >&2; }
# Two concurrent `make tools` never build into the same folder at once.
exec 9>"$DIR/.lock"
if ! flock -n 9; then
  log "another build of the tools holds $DIR/.lock; waiting for it"
  flock 9
fi
export CGO_ENABLED=0
# heartbeat WHAT CMD...: runs CMD, printing a line every 30 s so a long cold build is never silent.
heartbeat() {
  local what=$1; shift
  "$@" &
  local pid=$! n=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1; n=$((n + 1))
    if (( n % 30 == 0 )); then log "still building $what"; fi
  done
  wait "$pid"
}

k8s_missing=()
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  [ -x "$DIR/bin/$b" ] || k8s_missing+=("$b")
done
if [ ${#k8s_missing[@]} -gt 0 ]; then
  log "building ${k8s_missing[*]} (Kubernetes $K8S; ~8 min cold on 2 cores)"
  LDF="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    LDF="$LDF -X $p.gitVersion=$K8S -X $p.gitMajor=1 -X $p.gitMinor=37 -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  tmp=$(mktemp -d "$DIR/build.XXXX")
  heartbeat "${k8s_missing[*]}" bash -c 'cd "$1" && shift && go build -trimpath -ldflags "$1" -o "$2/" "${@:3}"' _ \
    "$ROOT/hack/tools/k8s" "$LDF" "$tmp" "${k8s_missing[@]/#/k8s.io/kubernetes/cmd/}"
  mv "$tmp"/* "$DIR/bin/" && rmdir "$tmp"
fi
if [ ! -x "$DIR/bin/etcd" ]; then
  log "building etcd $ETCD (~1 min cold)"
  heartbeat etcd bash -c 'cd "$1" && go build -trimpath -ldflags "-s -w" -o "$2" go.etcd.io/etcd/server/v3' _ \
    "$ROOT/hack/tools/etcd" "$DIR/bin/etcd.tmp"
  mv "$DIR/bin/etcd.tmp" "$DIR/bin/etcd"
fi
if [ ! -x "$DIR/bin/kwok" ]; then
  log "building kwok $KWOK (~1.5 min cold)"
  heartbeat kwok bash -c 'cd "$1" && go build -trimpath -ldflags "-s -w" -o "$2" sigs.k8s.io/kwok/cmd/kwok' _ \
    "$ROOT/hack/tools/kwok" "$DIR/bin/kwok.tmp"
  mv "$DIR/bin/kwok.tmp" "$DIR/bin/kwok"
fi
# CoreDNS answers a tenant's cluster DNS in tests and `vc-syncer dev` (kwok runs no CoreDNS Pod);
# hack/tools/coredns/main.go registers the default Kubernetes Corefile's plugins only.
COREDNS=v1.15.0
if [ ! -x "$DIR/bin/coredns" ]; then
  log "building coredns $COREDNS (~2 min cold on 2 cores)"
  heartbeat coredns bash -c 'cd "$1" && go build -trimpath -ldflags "-s -w" -o "$2" .' _ \
    "$ROOT/hack/tools/coredns" "$DIR/bin/coredns.tmp"
  mv "$DIR/bin/coredns.tmp" "$DIR/bin/coredns"
fi
# kwok exits with "no stages found" without Stage objects; it ships them in its module. We use
# its "fast" stages (no artificial delays). Its fast pod-complete stage selects Pods owned by a
# Job; super-cluster copies of tenant Pods carry no owner references (tenant UIDs mean nothing
# there), so our variant selects on the label the Job controller puts on its Pods instead.
# Regenerated on every run (cheap), so a change here reaches existing caches.
src=$(cd "$ROOT/hack/tools/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage
out="$DIR/kwok-stages.yaml.tmp"; : > "$out"
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
         pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  printf -- '---\n' >> "$out"
  if [ "$f" = pod/fast/pod-complete.yaml ]; then
    sed -e "s|key: '.metadata.ownerReferences.\[\].kind'|key: '.metadata.labels[\"batch.kubernetes.io/job-name\"]'|" \
        -e "/job-name/{n;s/operator: 'In'/operator: 'Exists'/;n;/values:/d}" -e "/^      - 'Job'$/d" "$src/$f" >> "$out"
  else
    cat "$src/$f" >> "$out"
  fi
done
mv "$out" "$DIR/kwok-stages.yaml"
# `hack/build-tools.sh e2e` also builds the Kubernetes end-to-end test binary (e2e.test) and
# the ginkgo CLI that runs it in parallel, for the conformance comparison (make conformance),
# from hack/tools/e2e/go.mod.
if [ "${1:-}" = e2e ]; then
  if [ ! -x "$DIR/bin/e2e.test" ]; then
    log "building e2e.test (Kubernetes $K8S end-to-end tests; ~11 min cold on 2 cores, 154 MB)"
    heartbeat e2e.test bash -c 'cd "$1" && go test -c -trimpath -ldflags "-s -w" -o "$2" k8s.io/kubernetes/test/e2e' _ \
      "$ROOT/hack/tools/e2e" "$DIR/bin/e2e.test.tmp"
    mv "$DIR/bin/e2e.test.tmp" "$DIR/bin/e2e.test"
  fi
  if [ ! -x "$DIR/bin/ginkgo" ]; then
    log "building the ginkgo CLI"
    heartbeat ginkgo bash -c 'cd "$1" && go build -trimpath -ldflags "-s -w" -o "$2" github.com/onsi/ginkgo/v2/ginkgo' _ \
      "$ROOT/hack/tools/e2e" "$DIR/bin/ginkgo.tmp"
    mv "$DIR/bin/ginkgo.tmp" "$DIR/bin/ginkgo"
  fi
  log "e2e tools ready in $DIR"
  echo "$DIR"
  exit 0
fi
if [ "${1:-}" = runtime ]; then
  log "control-plane tools ready (runtime only: helm and dockerfile-utils not built)"
  echo "$DIR"
  exit 0
fi
# helm (chart lint/template tests, `make verify`) and the npm Dockerfile linter dockerfile-utils,
# pinned in hack/tools/helm/go.mod and hack/tools/dockerfile-utils/package-lock.json.
HELM=v3.22.0
if [ ! -x "$DIR/bin/helm" ]; then
  log "building helm $HELM (~4 min cold)"
  heartbeat helm bash -c 'cd "$1" && go build -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$3" -o "$2" helm.sh/helm/v3/cmd/helm' _ \
    "$ROOT/hack/tools/helm" "$DIR/bin/helm.tmp" "$HELM"
  mv "$DIR/bin/helm.tmp" "$DIR/bin/helm"
fi
lock="$ROOT/hack/tools/dockerfile-utils/package-lock.json"
if ! cmp -s "$lock" "$DIR/npm/package-lock.json" || [ ! -x "$DIR/npm/node_modules/.bin/dockerfile-utils" ]; then
  log "installing dockerfile-utils (npm ci)"
  rm -rf "$DIR/npm" && mkdir -p "$DIR/npm"
  cp "$ROOT/hack/tools/dockerfile-utils/package.json" "$lock" "$DIR/npm/"
  (cd "$DIR/npm" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
ln -sf ../npm/node_modules/.bin/dockerfile-utils "$DIR/bin/dockerfile-utils"
log "tools ready in $DIR"
echo "$DIR"
