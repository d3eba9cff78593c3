#!/usr/bin/env bash
# Cyrus IMAP 3.6 with its CalDAV module (Debian 12) as a private instance on 127.0.0.1: its own
# imapd.conf (httpmodules: caldav, sasldb passwords), cyrus.conf (imap and http on loopback ports),
# data directory and pid file; the system's cyrus service is never used. Idempotent.
#   scripts/peers/cyrus.sh [start|stop]   (ports: LIFEPROJECT_CYRUS_PORT 5234 http, +1 imap)
PEER=cyrus
source "$(dirname "$0")/common.sh"
DIR="$PEERS_DIR/$PEER"
PORT="${LIFEPROJECT_CYRUS_PORT:-5234}"
IMAP_PORT=$((PORT + 1))
PIDFILE="$DIR/master.pid"
BIN=/usr/lib/cyrus/bin

if [ "${1:-start}" = stop ]; then stop_pid "$PIDFILE"; wait_port_free "$PORT"; exit 0; fi
apt_install cyrus-imapd cyrus-caldav sasl2-bin cyrus-admin
mkdir -p "$DIR"/{config,spool,run/socket,run/lock,run/proc}
chmod 755 "$PEERS_DIR" "$DIR"

cat > "$DIR/imapd.conf" <<CONF
configdirectory: $DIR/config
defaultpartition: default
partition-default: $DIR/spool
proc_path: $DIR/run/proc
mboxname_lockpath: $DIR/run/lock
lmtpsocket: $DIR/run/socket/lmtp
idlesocket: $DIR/run/socket/idle
notifysocket: $DIR/run/socket/notify
servername: 127.0.0.1
admins: cyrusadmin
unixhierarchysep: yes
allowplaintext: yes
sasl_pwcheck_method: auxprop
sasl_auxprop_plugin: sasldb
sasl_sasldb_path: $DIR/sasldb2
sasl_mech_list: PLAIN LOGIN
httpmodules: caldav
httpallowcompress: no
autocreate_quota: 0
autocreate_users: anyone
caldav_realm: lifeproject
syslog_prefix: cyrus-peer
CONF
cat > "$DIR/cyrus.conf" <<CONF
START {
  recover cmd="ctl_cyrusdb -r -C $DIR/imapd.conf"
}
SERVICES {
  imap cmd="imapd -C $DIR/imapd.conf" listen="127.0.0.1:$IMAP_PORT" prefork=0
  http cmd="httpd -C $DIR/imapd.conf" listen="127.0.0.1:$PORT" prefork=1
}
EVENTS {
}
DAEMON {
}
CONF
# Users as sasldb entries (the admin makes the user's mailbox once).
for user in "$PEER_USER" cyrusadmin; do
  echo "$PEER_PASSWORD" | saslpasswd2 -p -c -f "$DIR/sasldb2" -u 127.0.0.1 "$user"
  echo "$PEER_PASSWORD" | saslpasswd2 -p -c -f "$DIR/sasldb2" "$user"
done
chown -R cyrus:mail "$DIR"
chmod 640 "$DIR/sasldb2"

if ! running "$PIDFILE"; then
  log "starting cyrus master (http 127.0.0.1:$PORT, imap 127.0.0.1:$IMAP_PORT)"
  $BIN/master -C "$DIR/imapd.conf" -M "$DIR/cyrus.conf" -p "$PIDFILE" -d
  wait_port "$PORT" 30
  wait_port "$IMAP_PORT" 30
fi
# The user's mailbox (and with it the calendar home), once.
if [ ! -f "$DIR/user-created" ]; then
  cyradm --user cyrusadmin --password "$PEER_PASSWORD" --port "$IMAP_PORT" --auth PLAIN 127.0.0.1 \
    >"$DIR/cyradm.log" 2>&1 <<ADM || true
createmailbox user/$PEER_USER
ADM
  touch "$DIR/user-created"
fi
version="$(dpkg-query -W -f '${Version}' cyrus-imapd)"
write_url "http://127.0.0.1:$PORT/dav/calendars/user/$PEER_USER/" "Cyrus $version"
log "ready: $(head -1 "$DIR/url")"
