#!/usr/bin/env bash
# Starts the web server and a Celery worker (filesystem broker: no server needed) and stops both on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
# The embedded default: SQLite, the filesystem broker, the built-in development key.
export CONCORD_EMBEDDED=${CONCORD_EMBEDDED:-true}

pids=()
stop() {
  trap - INT TERM EXIT
  echo
  echo "Stopping Concord..."
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
}
trap stop INT TERM EXIT

"$BIN/celery" -A config worker --pool=solo --loglevel=warning --without-heartbeat --without-gossip --without-mingle &
pids+=($!)
# Threads as well as processes: a slow page holds one thread, and sign-in and the workspace keep answering.
"$BIN/gunicorn" config.wsgi:application --config config/gunicorn.conf.py --bind "$HOST:$PORT" \
  --access-logfile - --log-level warning &
pids+=($!)

echo
echo "Concord is running at http://$HOST:$PORT/  (Ctrl-C stops the web server and the worker)"
echo "Sign in with one of the demo logins listed above."
wait -n "${pids[@]}"
