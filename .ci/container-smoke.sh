#!/usr/bin/env bash
# The image's smoke run (.ci/run's container phase; runs by hand the same way):
#
#   .ci/container-smoke.sh            build the image, then every check below
#   SKIP_BUILD=1 .ci/container-smoke.sh   use the image already built
#   BUILD_ONLY=1 .ci/container-smoke.sh   build the two images, check nothing
#   COMPOSE=podman-compose .ci/container-smoke.sh   the compose run with one tool only
#   COMPOSE= .ci/container-smoke.sh                 no compose run (the image alone)
#   NODE_VERSION=20.20.2 IMAGE=localhost/pagamentos:node20 COMPOSE= .ci/container-smoke.sh
#                                     the image on another Node (its base made first)
#
# 1. builds the image (scripts/container/build.sh) and the PostgreSQL image;
# 2. runs the image alone on SQLite, read-only, no capabilities, data on a named volume:
#    /healthz, the image's HEALTHCHECK, a sandbox sign-up, a card payment approved, a Pix payment
#    paid; restarts the container and reads them back; checks the process is not root;
# 3. SIGTERM drains: exit 0 well within the server's 30 s drain limit;
# 4. runs compose.yaml on PostgreSQL with podman-compose, then with docker-compose (Debian's
#    1.29, against podman's Docker-compatible API: `podman system service`): the same flow, with
#    the worker service confirming the payments (the API runs no jobs), the API restarted, and
#    `compose stop` draining the API and the worker (exit 0, drain logged);
# 5. exports the image to an OCI archive with skopeo, reports its size, and scans every layer
#    for secrets (sk_, whsec_, PRIVATE KEY).
# Prints the figures (size, start-to-healthy, each step's time). Cleans up what it started.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
IMAGE="${IMAGE:-localhost/pagamentos:latest}"
# The compose tools to run the stack with, one after the other.
COMPOSE="${COMPOSE-podman-compose docker-compose}"
RUN_ID="smoke$$"
NAME="pagamentos-$RUN_ID"
VOLUME="pagamentos-$RUN_ID-data"
WORK=$(mktemp -d /var/tmp/pagamentos-smoke.XXXXXX)
figures=()
projects=()   # tool:project of each compose run, for the cleanup
figure() { figures+=("$1"); echo "   $1"; }
step() { echo; echo "-- $1"; }
now_ms() { date +%s%3N; }
fail() { echo "container smoke: FAILED: $*" >&2; exit 1; }

cleanup() {
  local rc=$?
  set +e
  if [ "$rc" -ne 0 ]; then
    echo "-- logs of $NAME:" >&2; podman logs --tail 40 "$NAME" >&2 2>&1
    if [ -n "${project:-}" ] && [ -f "$WORK/stack/compose.yaml" ]; then
      for id in $(podman ps -a -q --filter "label=com.docker.compose.project=$project"); do
        echo "-- $(podman inspect "$id" --format '{{.Name}} ({{.State.Status}}, exit {{.State.ExitCode}}, health {{.State.Health.Status}})'):" >&2
        podman logs --tail 30 "$id" >&2 2>&1
      done
    fi
  fi
  [ -n "${ticker_pid:-}" ] && kill "$ticker_pid" 2>/dev/null
  podman rm -f -v -t 0 "$NAME" >/dev/null 2>&1
  podman volume rm -f "$VOLUME" >/dev/null 2>&1
  for p in "${projects[@]}"; do
    (cd "$WORK/stack" && compose "${p%%:*}" -p "${p#*:}" down -v >/dev/null 2>&1)
    podman rm -f -v -t 0 $(podman ps -a -q --filter "label=com.docker.compose.project=${p#*:}") >/dev/null 2>&1
    podman volume rm -f "${p#*:}_pgdata" >/dev/null 2>&1
    podman network rm "${p#*:}_default" >/dev/null 2>&1
  done
  [ -n "${service_pid:-}" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null
  rm -rf "$WORK"
  echo
  echo "== container smoke figures =="
  printf '%s\n' "${figures[@]}"
  exit "$rc"
}
trap cleanup EXIT

json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=process.argv[1].split(".").reduce((o,k)=>o?.[k],JSON.parse(s));if(v===undefined)process.exit(1);console.log(typeof v==="object"?JSON.stringify(v):v)})' "$1"; }

# Waits for GET $1 to answer 200 (at most $2 seconds).
wait_ok() {
  local url="$1" limit_s="${2:-60}" start; start=$(date +%s)
  until curl -sf -o /dev/null "$url"; do
    [ $(( $(date +%s) - start )) -lt "$limit_s" ] || return 1
    sleep 0.1
  done
}

# The payment flow against the API at $1: prints "SK CARD_ID PIX_ID".
flow() {
  local base="$1" signup sk card card_id pix pix_id status i
  signup=$(curl -sf -X POST "$base/v1/sandbox/accounts") || fail "sandbox sign-up"
  sk=$(json keys.secretKey.key <<<"$signup")
  card=$(curl -sf "$base/v1/payments" -H "Authorization: Bearer $sk" -H 'Content-Type: application/json' \
    -H "Idempotency-Key: card-$RUN_ID" -d '{"amountInCents":2500,"method":"credit_card","cardToken":"tok_visa"}') || fail "card payment"
  card_id=$(json id <<<"$card")
  pix=$(curl -sf "$base/v1/payments" -H "Authorization: Bearer $sk" -H 'Content-Type: application/json' \
    -H "Idempotency-Key: pix-$RUN_ID" -d '{"amount":1050,"currency":"BRL","method":"pix"}') || fail "Pix payment"
  pix_id=$(json id <<<"$pix")
  json pix.copyPaste <<<"$pix" | grep -q '^000201' || fail "the Pix payment has no BR Code"
  curl -sf -X POST "$base/v1/sandbox/payments/$pix_id/pay" -H "Authorization: Bearer $sk" >/dev/null || fail "paying the Pix"
  # The card is approved by a background job (the worker), the Pix by the sandbox payer.
  for id in "$card_id" "$pix_id"; do
    for i in $(seq 1 200); do
      status=$(curl -sf "$base/v1/payments/$id" -H "Authorization: Bearer $sk" | json status)
      [ "$status" = approved ] && break
      sleep 0.1
    done
    [ "$status" = approved ] || fail "payment $id is $status, not approved"
    echo "   payment $id: $status" >&2
  done
  echo "$sk $card_id $pix_id"
}

# The payments made by flow() are there, approved.
still_there() {
  local base="$1" sk="$2" id status
  shift 2
  for id in "$@"; do
    status=$(curl -sf "$base/v1/payments/$id" -H "Authorization: Bearer $sk" | json status) || fail "payment $id is gone"
    [ "$status" = approved ] || fail "payment $id is $status after the restart"
  done
}

phase_start=$(now_ms)
if [ -z "${SKIP_BUILD:-}" ]; then
  step "build the image ($IMAGE) and the PostgreSQL image"
  t=$(now_ms)
  scripts/container/build.sh "$IMAGE" >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; fail "image build"; }
  figure "image build: $(( ($(now_ms) - t) / 1000 )) s"
  if [ -n "$COMPOSE" ]; then
    t=$(now_ms)
    podman build --pull=never -q -t localhost/pagamentos-postgres:15 scripts/container/postgres >"$WORK/pg-build.log" 2>&1 \
      || { tail -40 "$WORK/pg-build.log"; fail "PostgreSQL image build"; }
    figure "PostgreSQL image build: $(( ($(now_ms) - t) / 1000 )) s"
  fi
fi
figure "image: $IMAGE, Node $(podman run --rm --entrypoint node "$IMAGE" -v)"
figure "image size: $(podman image inspect "$IMAGE" --format '{{.Size}}' | awk '{printf "%.0f MB", $1/1e6}') (podman's count, uncompressed)"
# BUILD_ONLY=1: the builds (and the image's figures) and nothing else. .ci/run starts them beside
# npm ci and the checks, and runs this again with SKIP_BUILD=1 after the test suites.
if [ -n "${BUILD_ONLY:-}" ]; then exit 0; fi

step "alone, on SQLite: read-only root, no capabilities, data on volume $VOLUME"
podman volume create "$VOLUME" >/dev/null
run_app() {
  podman run -d --name "$NAME" --read-only --cap-drop=ALL --security-opt no-new-privileges \
    -v "$VOLUME:/data" -p 127.0.0.1::3000 -e PUBLIC_URL=http://localhost:3000 "$IMAGE" >/dev/null
}
t=$(now_ms)
run_app
PORT=$(podman port "$NAME" 3000/tcp | sed 's/.*://')
BASE="http://127.0.0.1:$PORT"
wait_ok "$BASE/readyz" 120 || fail "not healthy within 120 s"
figure "start to healthy (podman run to /readyz 200, SQLite): $(( $(now_ms) - t )) ms"
[ "$(curl -sf "$BASE/healthz" | json status)" = ok ] || fail "/healthz"
podman healthcheck run "$NAME" >/dev/null 2>&1 || fail "the image's HEALTHCHECK fails"
uid=$(podman exec "$NAME" sh -c "awk '/^Uid:/{print \$2}' /proc/1/status")
[ "$uid" != 0 ] || fail "the server runs as root"
capeff=$(podman exec "$NAME" sh -c "awk '/^CapEff:/{print \$2}' /proc/1/status")
[ "$capeff" = 0000000000000000 ] || fail "the server has capabilities $capeff"
podman exec "$NAME" sh -c 'touch /app/x 2>/dev/null' && fail "the root filesystem is writable"
echo "   uid $uid, no capabilities, root filesystem read-only"
read -r SK CARD PIX <<<"$(flow "$BASE")"
[ -n "$PIX" ] || fail "the payment flow on SQLite"

step "restart: the data is still there"
t=$(now_ms)
podman restart -t 35 "$NAME" >/dev/null
PORT=$(podman port "$NAME" 3000/tcp | sed 's/.*://')
BASE="http://127.0.0.1:$PORT"
wait_ok "$BASE/readyz" 120 || fail "not healthy after the restart"
figure "restart to healthy (SIGTERM drain + start): $(( $(now_ms) - t )) ms"
still_there "$BASE" "$SK" "$CARD" "$PIX"
echo "   $CARD and $PIX are there, approved"

step "SIGTERM drains: exit 0 within the drain limit (30 s)"
# A request in flight while the signal arrives gets its answer.
curl -s -o "$WORK/inflight" -w '%{http_code}' "$BASE/v1/payments?limit=100" -H "Authorization: Bearer $SK" >"$WORK/inflight.code" &
curl_pid=$!
t=$(now_ms)
podman kill --signal TERM "$NAME" >/dev/null
podman wait "$NAME" >/dev/null
stop_ms=$(( $(now_ms) - t ))
wait "$curl_pid" || true
code=$(podman inspect "$NAME" --format '{{.State.ExitCode}}')
[ "$code" = 0 ] || fail "exit code $code after SIGTERM"
[ "$stop_ms" -lt 30000 ] || fail "SIGTERM took $stop_ms ms"
# (Captured first: `grep -q` closing the pipe early would fail `podman logs` under pipefail.)
logs=$(podman logs "$NAME" 2>&1)
[ "$(grep -c 'shutting down: finishing in-flight' <<<"$logs")" -ge 2 ] || fail "no drain logged (restart and stop)"
code=$(cat "$WORK/inflight.code")
case "$code" in 200|000) ;; *) fail "a request in flight at SIGTERM got HTTP $code" ;; esac
figure "SIGTERM to exit 0: $stop_ms ms"
podman rm -f -v "$NAME" >/dev/null

# `compose TOOL ARGS...`: podman-compose drives podman itself; docker-compose speaks the Docker
# API, which `podman system service` serves on a socket of this run (started once, below).
compose() {
  local tool="$1"; shift
  case "$tool" in
    docker-compose) DOCKER_HOST="unix://$WORK/podman.sock" docker-compose "$@" ;;
    *) "$tool" "$@" ;;
  esac
}

# The stack's files in a folder of their own (as an operator has them: compose.yaml, .env from
# .env.example, ./secrets from make-secrets.sh, the PostgreSQL image's build context).
stack_files() {
  rm -rf "$WORK/stack"
  mkdir -p "$WORK/stack/scripts/container"
  cp compose.yaml "$WORK/stack/"
  cp -r scripts/container/postgres "$WORK/stack/scripts/container/"
  scripts/container/make-secrets.sh "$WORK/stack/secrets" >/dev/null
  API_PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  sed -e "s|^API_PORT=.*|API_PORT=$API_PORT|" -e "s|^PUBLIC_URL=.*|PUBLIC_URL=http://localhost:$API_PORT|" \
    -e "s|^IMAGE=.*|IMAGE=$IMAGE|" .env.example >"$WORK/stack/.env"
}

# The id of a running (or, with -a, any) container of service $2 in project $1.
service_id() {
  local all=""
  [ "$1" = -a ] && { all=-a; shift; }
  podman ps $all -q --filter "label=com.docker.compose.project=$1" --filter "label=com.docker.compose.service=$2" | head -1
}

# The stack through compose tool $1: the same flow as alone, through PostgreSQL and the worker.
compose_smoke() {
  local tool="$1" short
  case "$tool" in docker-compose) short=dc ;; *) short=pc ;; esac
  project="${RUN_ID}$short"
  local version
  case "$tool" in
    podman-compose) version="podman-compose $(podman-compose version 2>/dev/null | awk '/compose/ && /version/ {v=$NF} END {print v}')" ;;
    *) version="$tool $(compose "$tool" version --short 2>/dev/null || true)" ;;
  esac
  step "compose ($version) on PostgreSQL: migrate, API, worker (project $project)"
  stack_files
  cd "$WORK/stack"
  projects+=("$tool:$project")
  local t; t=$(now_ms)
  compose "$tool" -p "$project" up -d >"$WORK/compose-up.log" 2>&1 || { cat "$WORK/compose-up.log"; fail "$tool up"; }
  CBASE="http://127.0.0.1:$API_PORT"
  wait_ok "$CBASE/readyz" 180 || { cat "$WORK/compose-up.log"; fail "the compose API ($tool) is not ready within 180 s"; }
  figure "$tool up to API ready (PostgreSQL initialized, migrated): $(( $(now_ms) - t )) ms"
  [ "$(curl -sf "$CBASE/readyz" | json engine)" = postgres ] || fail "the compose API is not on PostgreSQL"
  local migrate_id; migrate_id=$(service_id -a "$project" migrate)
  [ -n "$migrate_id" ] && [ "$(podman inspect "$migrate_id" --format '{{.State.ExitCode}}')" = 0 ] || fail "the migrate service did not exit 0"
  # docker-compose started api and worker only once db was healthy and migrate had exited 0
  # (podman-compose 1.0 starts them in order without waiting; both migrate at start anyway).
  if [ "$tool" = docker-compose ]; then
    local db_id; db_id=$(service_id "$project" db)
    [ "$(podman inspect "$db_id" --format '{{.State.Health.Status}}')" = healthy ] || fail "db is not healthy"
    local migrate_end api_start
    migrate_end=$(podman inspect "$migrate_id" --format '{{.State.FinishedAt.Unix}}')
    api_start=$(podman inspect "$(service_id "$project" api)" --format '{{.State.StartedAt.Unix}}')
    [ "$api_start" -ge "$migrate_end" ] || fail "docker-compose started the API before migrate exited"
    echo "   db healthy, then migrate (exit 0), then api and worker"
  fi
  read -r CSK CCARD CPIX <<<"$(flow "$CBASE")"
  [ -n "$CPIX" ] || fail "the payment flow on PostgreSQL ($tool)"
  local worker_id api_id
  worker_id=$(service_id "$project" worker)
  [ -n "$worker_id" ] || fail "no worker running"
  # The API runs no jobs (WORKER_IN_PROCESS=false): the card's approval came from the worker.
  podman exec "$worker_id" sh -c 'cat /proc/1/cmdline | tr "\0" " "' | grep -q ' worker' || fail "the worker is not running cli worker"
  # No secret in the containers' environment: only the _FILE names.
  podman inspect "$worker_id" --format '{{range .Config.Env}}{{println .}}{{end}}' | grep -q '^DATABASE_URL=postgres' && fail "DATABASE_URL in the environment"
  echo "-- $tool: the API restarted keeps the data (PostgreSQL)"
  api_id=$(service_id "$project" api)
  podman restart -t 35 "$api_id" >/dev/null
  wait_ok "$CBASE/readyz" 120 || fail "the compose API did not come back"
  still_there "$CBASE" "$CSK" "$CCARD" "$CPIX"
  echo "   $CCARD and $CPIX are there, approved"
  echo "-- $tool stop: SIGTERM drains the API and the worker"
  api_id=$(service_id "$project" api)
  t=$(now_ms)
  compose "$tool" -p "$project" stop >"$WORK/compose-stop.log" 2>&1 || { cat "$WORK/compose-stop.log"; fail "$tool stop"; }
  figure "$tool stop (every service drained): $(( $(now_ms) - t )) ms"
  local id svc code logs
  for svc in api worker db; do
    id=$(service_id -a "$project" "$svc")
    code=$(podman inspect "$id" --format '{{.State.ExitCode}}')
    [ "$code" = 0 ] || fail "$svc exited $code on $tool stop"
  done
  # Exit 0 is the drain's: Node killed by an unhandled SIGTERM exits 143, and the worker's handler
  # exits 0 only after its jobs and webhook deliveries finished. The API also logs it.
  logs=$(podman logs "$api_id" 2>&1)
  grep -q 'shutting down: finishing in-flight' <<<"$logs" || fail "the API logged no drain"
  echo "   api, worker and db exited 0 (the API logged its drain)"
  t=$(now_ms)
  compose "$tool" -p "$project" down -v >/dev/null 2>&1
  figure "$tool down -v: $(( $(now_ms) - t )) ms"
  cd "$ROOT"
}

if [ -n "$COMPOSE" ]; then
  # podman runs health checks from systemd timers; where there is no systemd (this CI machine),
  # nothing runs them and a container stays "starting" for ever: docker-compose would wait on
  # `condition: service_healthy` (db, before migrate) until it gives up. Run them here every 2 s,
  # as the timers would, for both tools (podman-compose 1.0 does not wait on health, but `podman
  # ps` then shows it). The checks are the stack's own (compose.yaml's healthcheck: lines).
  if ! [ -d /run/systemd/system ]; then
    # (set +e: a check that fails, or a container that exits meanwhile, must not end the loop.)
    ( set +e
      while sleep 2; do
        for p in "${RUN_ID}pc" "${RUN_ID}dc"; do
          for id in $(podman ps -q --filter "label=com.docker.compose.project=$p" 2>/dev/null); do
            podman healthcheck run "$id" >/dev/null 2>&1
          done
        done
      done ) &
    ticker_pid=$!
  fi
  for tool in $COMPOSE; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install $tool)"
    if [ "$tool" = docker-compose ] && [ -z "${service_pid:-}" ]; then
      # podman's Docker-compatible API for this run only, on a socket in $WORK (not the system
      # socket an operator may already use); --time=0: no idle exit.
      podman system service --time=0 "unix://$WORK/podman.sock" >"$WORK/podman-service.log" 2>&1 &
      service_pid=$!
      for _ in $(seq 1 100); do [ -S "$WORK/podman.sock" ] && break; sleep 0.1; done
      curl -sf --unix-socket "$WORK/podman.sock" http://d/_ping >/dev/null || { cat "$WORK/podman-service.log"; fail "podman system service did not answer"; }
    fi
    compose_smoke "$tool"
  done
fi

step "OCI archive (skopeo) and a scan of every layer for secrets"
t=$(now_ms)
archive="$WORK/pagamentos.oci.tar"
skopeo copy -q "containers-storage:$IMAGE" "oci-archive:$archive:pagamentos" >/dev/null
figure "OCI archive: $(( $(stat -c %s "$archive") / 1000000 )) MB (compressed layers), written in $(( $(now_ms) - t )) ms"
mkdir -p "$WORK/oci" && tar xf "$archive" -C "$WORK/oci"
# Each layer unpacked and searched file by file: an API key or webhook secret (sk_test_/sk_live_/
# whsec_ and the characters after), or a PEM private key (its BEGIN line followed by base64; a
# library that only names the header, as libgnutls does, is not one).
layers=0
for blob in "$WORK"/oci/blobs/sha256/*; do
  if gzip -t "$blob" 2>/dev/null; then
    layers=$((layers + 1))
    dir="$WORK/layer"; rm -rf "$dir"; mkdir -p "$dir"
    gzip -dc "$blob" | tar -x -C "$dir" --no-same-owner --no-same-permissions 2>/dev/null || true
    chmod -R u+rwX "$dir"
    hits=$(grep -rlaE 'sk_(test|live)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{16,}' "$dir" || true)
    for file in $(grep -rlaE -- '-----BEGIN [A-Z ]*PRIVATE KEY-----' "$dir" || true); do
      grep -qaPzo -- '-----BEGIN [A-Z ]*PRIVATE KEY-----\r?\n([A-Za-z-]+:[^\n]*\n)*\s*[A-Za-z0-9+/=]{40}' "$file" || continue
      # A Debian package's own file, byte for byte as dpkg installed it (libgnutls carries its
      # self-test keys), is the distribution's, not a secret of ours.
      rel="${file#"$dir"/}"
      sum=$(cat "$dir"/var/lib/dpkg/info/*.md5sums 2>/dev/null | awk -v p="$rel" '$2 == p {print $1}')
      if [ -n "$sum" ] && [ "$sum" = "$(md5sum <"$file" | cut -d' ' -f1)" ]; then
        echo "   /$rel: a test key inside Debian's package file (dpkg checksum matches), allowed"
        continue
      fi
      hits+=" $file"
    done
    [ -z "$hits" ] || fail "layer $(basename "$blob" | cut -c1-12) holds a secret in: ${hits//$dir/}"
  elif grep -a -q -E 'sk_(test|live)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{16,}|PRIVATE KEY-----' "$blob"; then
    fail "$(basename "$blob") (the image's config or manifest) holds a secret"
  fi
done
rm -rf "$WORK/layer"
[ "$layers" -gt 0 ] || fail "no layers found in the archive"
echo "   $layers layers: no sk_/whsec_ key, no PRIVATE KEY"
user=$(skopeo inspect --config "oci-archive:$archive" | json config.User)
[ -n "$user" ] && [ "${user%%:*}" != 0 ] && [ "${user%%:*}" != root ] || fail "the image's user is '$user'"
echo "   the image runs as $user"

figure "container smoke total: $(( ($(now_ms) - phase_start) / 1000 )) s"
echo "container smoke: OK"
