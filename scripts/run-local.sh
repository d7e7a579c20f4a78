#!/usr/bin/env bash
# Starts the web server and a Celery worker (filesystem broker: no server needed) and stops both on Ctrl-C.
# A worker that dies is started again (after WORKER_RESTART_SECONDS, doubled while it keeps dying within
# a minute, up to 60 s); the web server keeps serving meanwhile. The script ends when the web server does.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
WORKER_RESTART_SECONDS=${WORKER_RESTART_SECONDS:-1}
LOGINS=${LOGINS:-}
#: The worker touches this file once it takes tasks (config/celery.py), after its banner.
export CONCORD_WORKER_READY_FILE=${CONCORD_WORKER_READY_FILE:-var/celery/worker.ready}
# The embedded default: SQLite, the filesystem broker, the built-in development key.
export CONCORD_EMBEDDED=${CONCORD_EMBEDDED:-true}
export CONCORD_SITE_URL=${CONCORD_SITE_URL:-http://$HOST:$PORT}

web="" worker=""
stop() {
  trap - INT TERM EXIT
  echo
  echo "Stopping Concord..."
  # shellcheck disable=SC2086 # the unset ones are empty and drop out
  kill $web $worker 2>/dev/null || true
  wait 2>/dev/null || true
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap stop EXIT

start_worker() {
  rm -f "$CONCORD_WORKER_READY_FILE"
  "$BIN/celery" -A config worker --pool=solo --loglevel=warning --without-heartbeat --without-gossip --without-mingle &
  worker=$!
  worker_started=$SECONDS
}

start_worker
# Threads as well as processes: a slow page holds one thread, and sign-in and the workspace keep answering.
"$BIN/gunicorn" config.wsgi:application --config config/gunicorn.conf.py --bind "$HOST:$PORT" \
  --access-logfile - --log-level warning &
web=$!

# The address and the logins come last, below the worker's banner and the server's start-up lines:
# wait (up to a minute) until the web server accepts connections and the worker takes tasks.
ready() {
  [[ -e "$CONCORD_WORKER_READY_FILE" ]] &&
    "$BIN/python" -c 'import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)' \
      "$HOST" "$PORT" 2>/dev/null
}
for _ in $(seq 120); do
  if ready || ! kill -0 "$web" 2>/dev/null || ! kill -0 "$worker" 2>/dev/null; then break; fi
  sleep 0.5
done
echo
if [[ -n "$LOGINS" && -s "$LOGINS" ]]; then
  echo "Demo logins:"
  sed -n '/^username/,$p' "$LOGINS"
  echo
fi
echo "Concord is running at http://$HOST:$PORT/  (Ctrl-C stops the web server and the worker)"

delay=$WORKER_RESTART_SECONDS
while true; do
  status=0
  wait -n "$web" "$worker" || status=$?
  if ! kill -0 "$web" 2>/dev/null; then
    echo "The web server stopped (exit status $status)." >&2
    exit "$status"
  fi
  if ! kill -0 "$worker" 2>/dev/null; then
    # A worker that ran for a while gets the short delay again; one that keeps dying waits longer.
    if (( SECONDS - worker_started >= 60 )); then delay=$WORKER_RESTART_SECONDS; fi
    echo "The Celery worker stopped (exit status $status); starting it again in ${delay} s." >&2
    sleep "$delay"
    delay=$(awk -v d="$delay" 'BEGIN { d *= 2; print (d > 60 ? 60 : d) }')
    start_worker
  fi
done
