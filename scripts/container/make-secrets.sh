#!/usr/bin/env bash
# Writes the compose stack's secrets (compose.yaml) into ./secrets/ (or $1), once: a random
# PostgreSQL password, the DATABASE_URL that uses it, a METRICS_TOKEN and a MASTER_KEYS key. Existing files are
# kept (a new password would not match the database initialized with the old one).
#
# The folder is 0700; the files are 0644 because the services read them as their own users
# (uid 10001, postgres) through bind mounts: the folder's mode is what keeps other host users out.
set -euo pipefail
dir="${1:-$(dirname "$0")/../../secrets}"
mkdir -p "$dir"
chmod 700 "$dir"
random() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
if [ ! -s "$dir/postgres_password" ]; then
  random >"$dir/postgres_password"
  rm -f "$dir/database_url"
fi
[ -s "$dir/database_url" ] || printf 'postgres://payments:%s@db:5432/payments\n' "$(cat "$dir/postgres_password")" >"$dir/database_url"
[ -s "$dir/metrics_token" ] || random >"$dir/metrics_token"
# MASTER_KEYS: id:base64 of 32 random bytes (what `npm run cli -- keys:new --id ...` prints). Kept
# once made: connector secrets sealed with it cannot be opened with another (rotation:
# docs/providers.md, keys:rewrap).
[ -s "$dir/master_keys" ] || printf 'k%s:%s\n' "$(date +%Y%m%d)" "$(head -c 32 /dev/urandom | base64 -w0)" >"$dir/master_keys"
chmod 644 "$dir"/postgres_password "$dir"/database_url "$dir"/metrics_token "$dir"/master_keys
echo "secrets in $(cd "$dir" && pwd): postgres_password database_url metrics_token master_keys"
