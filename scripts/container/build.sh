#!/usr/bin/env bash
# Builds the service's image (Containerfile) with podman, passing npm this machine's registry
# settings and certificate authorities as build secrets: they are mounted for the `npm ci` steps
# only and are in no layer (.ci/container-smoke.sh checks every layer for secrets).
#
#   scripts/container/build.sh [IMAGE]        default IMAGE: localhost/pagamentos:latest
#
# Makes the Debian minbase + Node bases first if missing (scripts/container/make-base.sh).
# Extra `podman build` arguments go in PODMAN_BUILD_ARGS, e.g. to build on the registry's Node:
#   PODMAN_BUILD_ARGS="--build-arg BUILD_IMAGE=docker.io/library/node:24-bookworm-slim \
#     --build-arg RUN_IMAGE=docker.io/library/node:24-bookworm-slim" scripts/container/build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
IMAGE="${1:-localhost/pagamentos:latest}"

case "${PODMAN_BUILD_ARGS:-}" in
  *BUILD_IMAGE=*) ;;
  *) scripts/container/make-base.sh >/dev/null ;;
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
podman build --format docker --pull=never \
  --secret id=npmrc,src="$secrets/npmrc" --secret id=npm_ca,src="$secrets/npm_ca" \
  ${PODMAN_BUILD_ARGS:-} -t "$IMAGE" -f Containerfile .
