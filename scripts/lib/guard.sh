#!/usr/bin/env bash
# guard.sh <parent-pid> <dir-to-remove|-> <command...>
# Runs a throwaway server so that it never outlives whoever started it: the server is stopped
# (SIGINT, then SIGKILL) and its temporary directory removed when we get SIGTERM/SIGINT, when the
# parent process disappears (even after a SIGKILL, which no handler in the parent can catch), or
# when the server exits on its own. BROKKR_GUARD_STOP_SIGNAL names another first signal (TERM) for
# a server that does not stop on SIGINT (kube-controller-manager: it would wait out the 10 s).
set -u
parent=$1 dir=$2
shift 2
signal=${BROKKR_GUARD_STOP_SIGNAL:-INT}
"$@" &
child=$!
stop_child() {
  kill -"$signal" "$child" 2>/dev/null
  for _ in $(seq 1 100); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$child" 2>/dev/null
  wait "$child" 2>/dev/null
  [ "$dir" != "-" ] && rm -rf "$dir"
  exit 0
}
trap stop_child TERM INT HUP
while kill -0 "$parent" 2>/dev/null && kill -0 "$child" 2>/dev/null; do
  sleep 0.5 & wait $!
done
stop_child
