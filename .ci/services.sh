#!/usr/bin/env bash
# Start throwaway PostgreSQL and Redis servers on loopback for the tests, as root or not.
# Usage: source .ci/services.sh start   (exports DATABASE_URL, CELERY_BROKER_URL, CACHE_URL)
#        .ci/services.sh stop
set -euo pipefail
STATE=${CONCORD_SERVICES_DIR:-/tmp/concord-services}
PG_PORT=${PG_PORT:-55432}
REDIS_PORT=${REDIS_PORT:-56379}
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)

as_postgres() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi
}

start() {
  mkdir -p "$STATE"
  chmod 755 "$STATE"
  if [ ! -f "$STATE/pg/PG_VERSION" ]; then
    mkdir -p "$STATE/pg"
    [ "$(id -u)" = 0 ] && chown postgres "$STATE/pg"
    as_postgres "$PG_BIN/initdb -D $STATE/pg -U postgres --auth=trust -E UTF8 >/dev/null"
  fi
  if ! as_postgres "$PG_BIN/pg_ctl -D $STATE/pg status" >/dev/null 2>&1; then
    # Durability is not needed for a test cluster; fsync off keeps the suite quick.
    as_postgres "$PG_BIN/pg_ctl -D $STATE/pg -w -l $STATE/pg/server.log -o \"-p $PG_PORT -k $STATE/pg -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off\" start" >/dev/null
  fi
  if ! redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --save "" --appendonly no \
      --logfile "$STATE/redis.log" >/dev/null
    for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
  export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/concord"
  export CELERY_BROKER_URL="redis://127.0.0.1:$REDIS_PORT/0"
  export CACHE_URL="redis://127.0.0.1:$REDIS_PORT/1"
  psql "postgres://postgres@127.0.0.1:$PG_PORT/postgres" -tAc "SELECT 1 FROM pg_database WHERE datname='concord'" \
    | grep -q 1 || psql "postgres://postgres@127.0.0.1:$PG_PORT/postgres" -qc "CREATE DATABASE concord" >/dev/null
}

stop() {
  redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  [ -d "$STATE/pg" ] && as_postgres "$PG_BIN/pg_ctl -D $STATE/pg -m fast stop" >/dev/null 2>&1 || true
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
