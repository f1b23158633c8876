#!/usr/bin/env bash
# How long an operator waits, on a checkout that is already built:
#   1. `npm run cli -- --help`
#   2. `npm start` (a restart: the embedded database already exists) until /health answers 200
#   3. `npm run cli -- migrate` on that embedded database (server stopped)
# Each is timed RUNS times (default 3) and every run is printed, in seconds.
#
#   bash bench/start-times.sh          # from the project root
#   RUNS=5 bash bench/start-times.sh
#
# It builds once first (untimed), in a temporary DATA_DIR on a free port, and removes that
# folder at the end. Run it on a quiet machine: the figures are wall-clock times.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS="${RUNS:-3}"
DATA_DIR="$(mktemp -d "${TMPDIR:-/tmp}/pgw-start-times-XXXXXX")"
PORT="${PORT:-$((20000 + RANDOM % 20000))}"
export DATA_DIR PORT HOST=127.0.0.1 LOG_LEVEL=warn
unset DATABASE_URL
SERVER_PID=""

cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$DATA_DIR"
}
trap cleanup EXIT

now() { date +%s%N; }
seconds() { awk -v ns="$1" 'BEGIN { printf "%.2f", ns / 1e9 }'; }

# Starts `npm start` in the background (its own process group) and waits for /health.
start_server() {
  setsid npm start >"$DATA_DIR/server.log" 2>&1 &
  SERVER_PID=$!
  until curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      cat "$DATA_DIR/server.log" >&2
      echo "the server exited before /health answered" >&2
      exit 1
    fi
    sleep 0.05
  done
}

stop_server() {
  # npm and node share the group setsid gave them: SIGTERM reaches node's graceful stop.
  kill -TERM -- "-$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

echo "preparing: build (if stale) and a first start that creates the embedded database" >&2
node scripts/build-if-stale.js
start_server
stop_server

echo "node $(node --version), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

printf 'cli --help:'
for _ in $(seq "$RUNS"); do
  t0=$(now)
  # (before `--help` existed the CLI printed its usage and exited 64: timed all the same)
  code=0
  npm run --silent cli -- --help >/dev/null 2>&1 || code=$?
  if [ "$code" != 0 ] && [ "$code" != 64 ]; then echo " (cli --help exited $code)"; exit 1; fi
  printf ' %s s' "$(seconds $(($(now) - t0)))"
done
echo

printf 'restart to /health:'
for _ in $(seq "$RUNS"); do
  t0=$(now)
  start_server
  printf ' %s s' "$(seconds $(($(now) - t0)))"
  stop_server
done
echo

printf 'cli migrate:'
for _ in $(seq "$RUNS"); do
  t0=$(now)
  npm run --silent cli -- migrate >/dev/null 2>&1 || { echo " (cli migrate failed)"; exit 1; }
  printf ' %s s' "$(seconds $(($(now) - t0)))"
done
echo
echo "load average at the end $(cut -d" " -f1-3 /proc/loadavg)"
