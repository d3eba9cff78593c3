#!/usr/bin/env bash
# Install (when missing) and start every peer, or stop them all: scripts/peers/all.sh [start|stop].
# A peer that fails is reported and the others still start; the compatibility suite
# (tests/compat/) skips it by name, or fails under LIFEPROJECT_REQUIRE_SERVICES=1.
set -uo pipefail
cd "$(dirname "$0")"
rc=0
for peer in davical cyrus sogo; do
  start=$(date +%s)
  if ./"$peer".sh "${1:-start}"; then
    echo "peers/$peer: ${1:-start} took $(( $(date +%s) - start )) s" >&2
  else
    echo "peers/$peer: ${1:-start} FAILED after $(( $(date +%s) - start )) s" >&2
    rc=1
  fi
done
exit $rc
