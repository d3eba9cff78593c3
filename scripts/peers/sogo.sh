#!/usr/bin/env bash
# SOGo 5.8 (Debian 12) on 127.0.0.1: its own PostgreSQL database (lp_sogo) with an SQL user source
# (plain passwords: a test instance), its own memcached, and sogod with its own defaults (HOME in
# the peer's directory), started with -WOPort 127.0.0.1:PORT and stopped by pid. Idempotent.
#   scripts/peers/sogo.sh [start|stop]    (ports: LIFEPROJECT_SOGO_PORT 5236, memcached +1)
PEER=sogo
source "$(dirname "$0")/common.sh"
DIR="$PEERS_DIR/$PEER"
PORT="${LIFEPROJECT_SOGO_PORT:-5236}"
MEMCACHED_PORT=$((PORT + 1))
DB="${LIFEPROJECT_SOGO_DB:-lp_sogo}"
PG="${LIFEPROJECT_PEERS_POSTGRES:--h 127.0.0.1 -U postgres}"
PIDFILE="$DIR/sogod.pid"
MC_PIDFILE="$DIR/memcached.pid"

if [ "${1:-start}" = stop ]; then stop_pid "$PIDFILE"; stop_pid "$MC_PIDFILE"; wait_port_free "$PORT"; exit 0; fi
apt_install sogo memcached
mkdir -p "$DIR/home"
chmod 755 "$PEERS_DIR"

if ! psql $PG -qAtX -c "SELECT 1 FROM pg_database WHERE datname = '$DB'" postgres | grep -q 1; then
  log "creating database $DB"
  psql $PG -qAtX -c "CREATE DATABASE $DB" postgres
fi
PGOPTIONS='--client-min-messages=warning' psql $PG -qAtX "$DB" >/dev/null <<SQL
CREATE TABLE IF NOT EXISTS sogo_users (c_uid TEXT PRIMARY KEY, c_name TEXT, c_password TEXT, c_cn TEXT, mail TEXT);
INSERT INTO sogo_users VALUES ('$PEER_USER', '$PEER_USER', '$PEER_PASSWORD', '$PEER_USER', '$PEER_USER@example.net')
  ON CONFLICT (c_uid) DO UPDATE SET c_password = EXCLUDED.c_password;
SQL

DBURL="postgresql://postgres:trust@127.0.0.1:5432/$DB"
# Every default on sogod's command line (GNUstep's argument domain comes before /etc/sogo/sogo.conf,
# which this script never touches).
cat > "$DIR/sogod.args" <<CONF
-SOGoProfileURL $DBURL/sogo_user_profile
-OCSFolderInfoURL $DBURL/sogo_folder_info
-OCSSessionsFolderURL $DBURL/sogo_sessions_folder
-OCSEMailAlarmsFolderURL $DBURL/sogo_alarms_folder
-SOGoUserSources ({type=sql;id=users;viewURL="$DBURL/sogo_users";canAuthenticate=YES;isAddressBook=NO;userPasswordAlgorithm=plain;})
-SOGoMemcachedHost 127.0.0.1:$MEMCACHED_PORT
-SOGoTimeZone UTC
-SOGoAppointmentSendEMailNotifications NO
-WOWorkersCount 2
-WOPort 127.0.0.1:$PORT
-WOPidFile $PIDFILE
-WOLogFile $DIR/sogod.log
CONF
chown -R sogo:sogo "$DIR"

if ! running "$MC_PIDFILE"; then
  # As the sogo user, which owns the directory its pid file is written to.
  memcached -d -u sogo -l 127.0.0.1 -p "$MEMCACHED_PORT" -m 32 -P "$MC_PIDFILE"
  wait_port "$MEMCACHED_PORT" 10
fi
if ! running "$PIDFILE"; then
  log "starting sogod on 127.0.0.1:$PORT"
  args=()
  while read -r name value; do args+=("$name" "$value"); done < "$DIR/sogod.args"
  (cd "$DIR" && runuser -u sogo -- env HOME="$DIR/home" /usr/sbin/sogod "${args[@]}")
  wait_port "$PORT" 30
fi
version="$(dpkg-query -W -f '${Version}' sogo)"
write_url "http://127.0.0.1:$PORT/SOGo/dav/$PEER_USER/Calendar/" "SOGo $version"
log "ready: $(head -1 "$DIR/url")"
