#!/usr/bin/env bash
# Builds the service's image (Containerfile) with podman, passing npm this machine's registry
# settings and certificate authorities as build secrets: they are mounted for the `npm ci` steps
# only and are in no layer (.ci/container-smoke.sh checks every layer for secrets).
#
#   scripts/container/build.sh [IMAGE]        default IMAGE: localhost/pagamentos:latest
#   NODE_VERSION=20.20.2 scripts/container/build.sh localhost/pagamentos:node20
#
# Makes the Debian minbase + Node bases first if missing (scripts/container/make-base.sh), for
# NODE_VERSION (default: the version pinned there, Node 24) and DEBIAN_RELEASE, and passes both
# to the Containerfile as build arguments. Extra `podman build` arguments go in PODMAN_BUILD_ARGS,
# e.g. to build on the registry's Node where a registry is reachable (no base is made then, and
# podman pulls the image if it is not there yet):
#   PODMAN_BUILD_ARGS="--build-arg BUILD_IMAGE=docker.io/library/node:20-bookworm-slim \
#     --build-arg RUN_IMAGE=docker.io/library/node:20-bookworm-slim" scripts/container/build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
IMAGE="${1:-localhost/pagamentos:latest}"

base_args=()
case "${PODMAN_BUILD_ARGS:-}" in
  *BUILD_IMAGE=*)
    # A registry's base: pulled when missing.
    pull=missing ;;
  *)
    # The made bases (localhost/...): nothing to pull, and no registry to ask.
    pull=never
    make_base=(scripts/container/make-base.sh)
    if [ -n "${NODE_VERSION:-}" ]; then
      make_base+=(--node "$NODE_VERSION")
      base_args+=(--build-arg "NODE_VERSION=$NODE_VERSION")
    fi
    if [ -n "${DEBIAN_RELEASE:-}" ]; then
      make_base+=(--debian "$DEBIAN_RELEASE")
      base_args+=(--build-arg "DEBIAN_RELEASE=$DEBIAN_RELEASE")
    fi
    "${make_base[@]}" >/dev/null ;;
esac

secrets=$(mktemp -d)
trap 'rm -rf "$secrets"' EXIT
chmod 700 "$secrets"
# npm's settings as this machine has them: the registry, any credentials in ~/.npmrc, and the
# certificate authorities npm trusts here (a proxy's own CA, when there is one).
{
  echo "registry=$(npm config get registry)"
  [ -f "$HOME/.npmrc" ] && grep -v -E '^\s*(registry|cafile|ca|nodedir)\s*=' "$HOME/.npmrc" || true
} >"$secrets/npmrc"
ca="${NODE_EXTRA_CA_CERTS:-}"
[ -n "$ca" ] && [ -f "$ca" ] || ca=$(npm config get cafile 2>/dev/null || true)
[ -n "$ca" ] && [ "$ca" != "null" ] && [ -f "$ca" ] || ca=/etc/ssl/certs/ca-certificates.crt
cp "$ca" "$secrets/npm_ca"

# --format docker: the OCI image format has no HEALTHCHECK (podman would drop it).
# shellcheck disable=SC2086
podman build --format docker --pull="$pull" \
  --secret id=npmrc,src="$secrets/npmrc" --secret id=npm_ca,src="$secrets/npm_ca" \
  "${base_args[@]}" ${PODMAN_BUILD_ARGS:-} -t "$IMAGE" -f Containerfile .
