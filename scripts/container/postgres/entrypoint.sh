#!/bin/sh
# First start: initdb with the password from POSTGRES_PASSWORD_FILE (a compose secret) for the
# user POSTGRES_USER and a database POSTGRES_DB; every start: postgres in the foreground (PID 1).
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=postgres}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD_FILE:-}" ] && [ -s "$POSTGRES_PASSWORD_FILE" ] \
    || { echo "pg-entrypoint: POSTGRES_PASSWORD_FILE must name a non-empty file" >&2; exit 1; }
  initdb --username="$POSTGRES_USER" --pwfile="$POSTGRES_PASSWORD_FILE" --auth-local=trust \
    --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    postgres -c listen_addresses='' &
    pid=$!
    until pg_isready -q -h /var/run/postgresql; do sleep 0.2; done
    createdb -h /var/run/postgresql -U "$POSTGRES_USER" "$POSTGRES_DB"
    kill -INT "$pid"; wait "$pid" || true
  fi
  echo "pg-entrypoint: initialized $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)" >&2
fi
exec postgres -c listen_addresses='*' "$@"
