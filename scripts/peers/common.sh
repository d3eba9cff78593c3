# Shared by the peer scripts: where a peer keeps its data, and how it is started and stopped by pid.
# A peer listens on 127.0.0.1 only. LIFEPROJECT_PEERS_DIR (default: /var/tmp/lifeproject-peers, which
# the servers' own users (cyrus, sogo, www-data) can reach, unlike the repository's private var/)
# holds one directory per peer: its configuration, data, log, pid file and a `url` file
# (CalDAV URL, user, password) that the compatibility suite reads.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEERS_DIR="${LIFEPROJECT_PEERS_DIR:-/var/tmp/lifeproject-peers}"
PEER_USER="${LIFEPROJECT_PEER_USER:-alice}"
PEER_PASSWORD="${LIFEPROJECT_PEER_PASSWORD:-peer-test-password}"

log() { echo "peers/$PEER: $*" >&2; }

need_root() {
  if [ "$(id -u)" != 0 ]; then log "needs root (apt-get, service users)"; exit 2; fi
}

# apt-get install the packages not installed yet (one `apt-get update` per machine per hour).
apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  need_root
  local stamp=/var/lib/apt/periodic/lifeproject-update-stamp
  if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +60)" ]; then
    apt-get update -qq && mkdir -p "$(dirname "$stamp")" && touch "$stamp"
  fi
  # Services are never started by the packages (policy-rc.d): each peer runs as our own process.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Whether the process in pid file $1 is alive.
running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Stop the process in pid file $1 (its own id only), waiting for it to go.
stop_pid() {
  local pidfile="$1"
  if running "$pidfile"; then
    kill "$(cat "$pidfile")" 2>/dev/null || true
    for _ in $(seq 150); do running "$pidfile" || break; sleep 0.1; done
  fi
  rm -f "$pidfile"
}

# Wait until 127.0.0.1:$1 accepts connections (at most $2 seconds).
wait_port() {
  for _ in $(seq $(( ${2:-30} * 10 ))); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  log "nothing answers on 127.0.0.1:$1"; return 1
}

# Wait until nothing listens on 127.0.0.1:$1 any more (a stopped server's children may linger).
wait_port_free() {
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null || return 0
    sleep 0.1
  done
  log "127.0.0.1:$1 is still taken"; return 1
}

# Write the peer's url file: what the compatibility suite reads.
write_url() {
  printf 'url=%s\nusername=%s\npassword=%s\nversion=%s\n' "$1" "$PEER_USER" "$PEER_PASSWORD" "$2" > "$DIR/url"
}
