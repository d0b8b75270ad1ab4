#!/usr/bin/env bash
# Fails when the generated files differ from what controller-gen makes of the current markers:
# the deepcopy code of pkg/apis, the CRDs in config/crd/bases and config/rbac/role.yaml. The
# working tree is left untouched: generation runs into a scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
CONTROLLER_GEN=${CONTROLLER_GEN:-go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0}
export CONTROLLER_GEN
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
GENERATED=$scratch ./hack/manifests.sh
$CONTROLLER_GEN object paths=./pkg/apis/... output:object:dir="$scratch/deepcopy" 2>/dev/null ||
	$CONTROLLER_GEN object paths=./pkg/apis/... output:dir="$scratch/deepcopy"
status=0
for f in "$scratch"/config/crd/bases/*.yaml "$scratch"/config/rbac/role.yaml; do
	rel=${f#"$scratch"/}
	if ! diff -u "$rel" "$f" >/dev/null; then
		echo "$rel is not what controller-gen generates from the markers; run \`make manifests\`:" >&2
		diff -u "$rel" "$f" | head -40 >&2 || true
		status=1
	fi
done
got=$(find "$scratch/deepcopy" -name 'zz_generated.deepcopy.go' | head -1)
if [ -z "$got" ] || ! diff -u pkg/apis/tenancy/v1alpha1/zz_generated.deepcopy.go "$got" >/dev/null; then
	echo "pkg/apis/tenancy/v1alpha1/zz_generated.deepcopy.go is not what controller-gen generates; run \`make generate\`" >&2
	status=1
fi
exit $status
