#!/usr/bin/env bash
# Makes PostgreSQL and MySQL/MariaDB available for ax's tests on 127.0.0.1, then prints the URLs.
#
# - A server already answering on 127.0.0.1 (5432 / 3306) is used as it is.
# - An installed server that is stopped is started.
# - A missing server is installed from Debian's packages (postgresql, mariadb-server) and set up for
#   tests only: loopback trust for PostgreSQL, root without password over TCP for MariaDB. Do not
#   run this on a machine whose databases hold anything of value.
#
# Override the URLs with AX_TEST_POSTGRES_URL / AX_TEST_MYSQL_URL to use other servers; then this
# script only checks that they answer.
#
# The tests run six at a time (.config/nextest.toml), some with three axd of about fifteen
# connections each: a local server allowing fewer connections than PG_MAX_CONNECTIONS /
# MY_MAX_CONNECTIONS is raised to that (PostgreSQL: ALTER SYSTEM and one restart, once; MariaDB: SET
# GLOBAL on the running server, and the same number on the command line when this script starts
# it). A server that allows more is left as it is.
set -euo pipefail
PG_MAX_CONNECTIONS=400
MY_MAX_CONNECTIONS=600

PG_URL=${AX_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
MY_URL=${AX_TEST_MYSQL_URL:-mysql://root@127.0.0.1:3306/test}
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

log() { echo "test-databases: $*" >&2; }

wait_for() { # what, command...
  local what=$1; shift
  for _ in $(seq 1 60); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  log "$what did not come up"; return 1
}

apt_install() {
  log "installing $* from Debian packages"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

pg_ready() { pg_isready -h 127.0.0.1 -p 5432 -q; }

ensure_postgres() {
  if [ -n "${AX_TEST_POSTGRES_URL:-}" ]; then return 0; fi
  if command -v pg_isready >/dev/null && pg_ready; then
    log "PostgreSQL is running"
  else
    local fresh=0
    if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
      apt_install postgresql
      fresh=1
    fi
    local ver
    ver=$(ls /etc/postgresql | sort -V | tail -n 1)
    if [ "$fresh" = 1 ]; then
      # Tests connect over loopback as postgres without a password.
      local hba=/etc/postgresql/$ver/main/pg_hba.conf
      $SUDO sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
    fi
    log "starting PostgreSQL $ver"
    $SUDO pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
    wait_for PostgreSQL pg_ready
  fi
  raise_postgres_connections
  # The test database.
  if ! psql "postgres://postgres@127.0.0.1:5432/test" -c 'select 1' >/dev/null 2>&1; then
    psql "postgres://postgres@127.0.0.1:5432/postgres" -c 'CREATE DATABASE test' >/dev/null \
      || $SUDO -u postgres psql -c 'CREATE DATABASE test' >/dev/null
  fi
}

raise_postgres_connections() {
  local url="postgres://postgres@127.0.0.1:5432/postgres" now
  now=$(psql "$url" -Atc 'SHOW max_connections')
  if [ "$now" -ge "$PG_MAX_CONNECTIONS" ]; then return 0; fi
  log "PostgreSQL allows $now connections; raising max_connections to $PG_MAX_CONNECTIONS (one restart)"
  psql "$url" -qc "ALTER SYSTEM SET max_connections = $PG_MAX_CONNECTIONS"
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    log "PostgreSQL is not a local Debian cluster that this script can restart: restart it to apply max_connections"
    return 0
  fi
  restart_postgres
}

my_ready() { mariadb-admin --protocol=tcp -h 127.0.0.1 -P 3306 -u root ping >/dev/null 2>&1; }

ensure_mysql() {
  if [ -n "${AX_TEST_MYSQL_URL:-}" ]; then return 0; fi
  if command -v mariadb-admin >/dev/null && my_ready; then
    log "MariaDB/MySQL is running"
  else
    local fresh=0
    if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ]; then
      apt_install mariadb-server mariadb-client
      fresh=1
    fi
    log "starting MariaDB"
    $SUDO mkdir -p /run/mysqld && $SUDO chown mysql:mysql /run/mysqld 2>/dev/null || true
    $SUDO start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql \
    --max-connections="$MY_MAX_CONNECTIONS"
    wait_for MariaDB $SUDO mariadb-admin ping
    if [ "$fresh" = 1 ] || ! my_ready; then
      # Tests connect over TCP as root without a password.
      $SUDO mariadb -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD(''); FLUSH PRIVILEGES;"
    fi
    wait_for "MariaDB over TCP" my_ready
  fi
  raise_mysql_connections
  mariadb --protocol=tcp -h 127.0.0.1 -P 3306 -u root -e 'CREATE DATABASE IF NOT EXISTS test' >/dev/null
}

raise_mysql_connections() {
  local now
  now=$(mariadb --protocol=tcp -h 127.0.0.1 -P 3306 -u root -Nse 'SELECT @@GLOBAL.max_connections')
  if [ "$now" -ge "$MY_MAX_CONNECTIONS" ]; then return 0; fi
  log "MariaDB allows $now connections; raising max_connections to $MY_MAX_CONNECTIONS"
  mariadb --protocol=tcp -h 127.0.0.1 -P 3306 -u root -e "SET GLOBAL max_connections = $MY_MAX_CONNECTIONS"
}

restart_postgres() {
  local ver
  ver=$(ls /etc/postgresql | sort -V | tail -n 1)
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$ver" main restart
  wait_for PostgreSQL pg_ready
}

if [ $# -gt 0 ]; then log "unknown argument $1 (this script takes none)"; exit 2; fi

ensure_postgres
ensure_mysql
echo "AX_TEST_POSTGRES_URL=$PG_URL"
echo "AX_TEST_MYSQL_URL=$MY_URL"
