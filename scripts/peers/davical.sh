#!/usr/bin/env bash
# DAViCal 1.1.12 (Debian 12) on 127.0.0.1: its own database (lp_davical) in the local PostgreSQL,
# made by DAViCal's own create-database.sh, and a private apache2 with its own configuration and
# pid file. Idempotent: installs what is missing, creates what does not exist, starts if stopped.
#   scripts/peers/davical.sh [start|stop]     (PORT: LIFEPROJECT_DAVICAL_PORT, default 5233)
PEER=davical
source "$(dirname "$0")/common.sh"
DIR="$PEERS_DIR/$PEER"
PORT="${LIFEPROJECT_DAVICAL_PORT:-5233}"
DB="${LIFEPROJECT_DAVICAL_DB:-lp_davical}"
PG="${LIFEPROJECT_PEERS_POSTGRES:--h 127.0.0.1 -U postgres}"
PIDFILE="$DIR/apache2.pid"

if [ "${1:-start}" = stop ]; then stop_pid "$PIDFILE"; wait_port_free "$PORT"; exit 0; fi
mkdir -p "$DIR"
apt_install davical apache2 libapache2-mod-php php-pgsql

# The database, once (DAViCal's own script; the roles davical_app and davical_dba are the package's).
if ! psql $PG -qAtX -c "SELECT 1 FROM pg_database WHERE datname = '$DB'" postgres | grep -q 1; then
  log "creating database $DB"
  PGHOST=127.0.0.1 PGUSER=postgres /usr/share/davical/dba/create-database.sh "$DB" "admin-$RANDOM$RANDOM" >"$DIR/create-database.log" 2>&1
fi
# The test user, a row of usr and its principal ('**' marks a plain-text password).
psql $PG -qAtX "$DB" >/dev/null <<SQL
INSERT INTO usr (user_no, active, email_ok, updated, username, password, fullname, email)
  SELECT 1001, TRUE, current_date, current_date, '$PEER_USER', '**$PEER_PASSWORD', '$PEER_USER', '$PEER_USER@example.net'
  WHERE NOT EXISTS (SELECT 1 FROM usr WHERE username = '$PEER_USER');
UPDATE usr SET password = '**$PEER_PASSWORD' WHERE username = '$PEER_USER';
INSERT INTO principal (type_id, user_no, displayname, default_privileges)
  SELECT 1, user_no, '$PEER_USER', 0::BIT(24) FROM usr WHERE username = '$PEER_USER'
  AND NOT EXISTS (SELECT 1 FROM principal p JOIN usr u USING (user_no) WHERE u.username = '$PEER_USER');
SQL

# DAViCal reads /etc/davical/<server name>-conf.php before config.php: ours names our database.
cat > /etc/davical/127.0.0.1-conf.php <<PHP
<?php
\$c->pg_connect[] = "dbname=$DB user=davical_app host=127.0.0.1";
\$c->system_name = "lifeproject peer";
PHP

cat > "$DIR/apache2.conf" <<CONF
ServerRoot /etc/apache2
ServerName 127.0.0.1
Listen 127.0.0.1:$PORT
PidFile $PIDFILE
ErrorLog $DIR/error.log
LogLevel warn
User www-data
Group www-data
DefaultRuntimeDir $DIR
Mutex file:$DIR
LoadModule mpm_prefork_module /usr/lib/apache2/modules/mod_mpm_prefork.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule alias_module /usr/lib/apache2/modules/mod_alias.so
LoadModule dir_module /usr/lib/apache2/modules/mod_dir.so
LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so
LoadModule env_module /usr/lib/apache2/modules/mod_env.so
LoadModule php_module /usr/lib/apache2/modules/libphp8.2.so
StartServers 2
MinSpareServers 2
MaxSpareServers 4
MaxRequestWorkers 16
TypesConfig /etc/mime.types
<FilesMatch ".+\.php$">
  SetHandler application/x-httpd-php
</FilesMatch>
DocumentRoot /usr/share/davical/htdocs
<Directory /usr/share/davical/htdocs>
  AllowOverride None
  Require all granted
  AcceptPathInfo On
</Directory>
CONF

if ! running "$PIDFILE"; then
  log "starting apache2 on 127.0.0.1:$PORT"
  APACHE_RUN_DIR="$DIR" APACHE_LOCK_DIR="$DIR" APACHE_LOG_DIR="$DIR" /usr/sbin/apache2 -f "$DIR/apache2.conf" -k start
  wait_port "$PORT" 20
fi
version="$(dpkg-query -W -f '${Version}' davical)"
write_url "http://127.0.0.1:$PORT/caldav.php/$PEER_USER/" "DAViCal $version"
log "ready: $(head -1 "$DIR/url")"
