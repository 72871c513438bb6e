# shellcheck shell=bash
# Starts the machine's PostgreSQL cluster for the dsh-session-postgres tests and exports
#   DSH_PG_URL       the connection string of a role and database made for the tests
#   DSH_PG_REQUIRED  1: those tests fail, instead of skipping, when the server is unreachable
# Sourced by .ci/run (so the exports reach the test step); `bash scripts/ci/postgres.sh` also
# works for a developer and prints the two lines to export.
#
# Works on a fresh image where Debian's cluster exists but is stopped, whoever runs it: as root
# the PostgreSQL commands run as the postgres user through runuser (or su); as another user through
# `sudo -n -u postgres` when sudo is there; as the postgres user itself directly. A cluster that
# cannot be started is a failure here (CI requires the server), with the reason printed.

dsh_pg_main() {
  local version="${DSH_PG_VERSION:-15}" cluster="${DSH_PG_CLUSTER:-main}"
  local role="${DSH_PG_ROLE:-dsh}" password="${DSH_PG_PASSWORD:-dsh}" database="${DSH_PG_DATABASE:-dsh_test}"
  local host=127.0.0.1 port as_postgres

  if [ "$(id -u)" = 0 ]; then
    if command -v runuser >/dev/null 2>&1; then as_postgres=(runuser -u postgres --); else as_postgres=(su postgres -s /bin/sh -c '"$0" "$@"'); fi
  elif [ "$(id -un)" = postgres ]; then
    as_postgres=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n -u postgres true 2>/dev/null; then
    as_postgres=(sudo -n -u postgres --)
  else
    echo "postgres: running as $(id -un), which is neither root nor postgres and has no password-less sudo; cannot start the cluster" >&2
    return 1
  fi

  if ! command -v pg_lsclusters >/dev/null 2>&1; then
    echo "postgres: pg_lsclusters not found (is Debian's postgresql-common installed?)" >&2
    return 1
  fi
  port=$(pg_lsclusters --no-header | awk -v v="$version" -v c="$cluster" '$1 == v && $2 == c { print $3 }')
  if [ -z "$port" ]; then
    echo "postgres: no cluster $version/$cluster on this machine (pg_lsclusters lists: $(pg_lsclusters --no-header | awk '{ print $1 "/" $2 }' | xargs))" >&2
    return 1
  fi
  if ! pg_lsclusters --no-header | awk -v v="$version" -v c="$cluster" '$1 == v && $2 == c { print $4 }' | grep -q online; then
    # pg_ctlcluster as root switches to the cluster owner itself; as another user it must be the owner.
    if [ "$(id -u)" = 0 ]; then pg_ctlcluster "$version" "$cluster" start; else "${as_postgres[@]}" pg_ctlcluster "$version" "$cluster" start; fi
  fi
  local bin="/usr/lib/postgresql/$version/bin"
  local tries=0
  until "$bin/pg_isready" -q -h "$host" -p "$port"; do
    tries=$((tries + 1))
    if [ "$tries" -ge 60 ]; then echo "postgres: cluster $version/$cluster did not accept connections on $host:$port within 60 s" >&2; return 1; fi
    sleep 1
  done

  local psql=("${as_postgres[@]}" "$bin/psql" -X -q -v ON_ERROR_STOP=1 -p "$port" -d postgres)
  # Idempotent: the role and the database are created once and kept (a second run changes nothing).
  "${psql[@]}" -c "DO \$\$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$role') THEN
        CREATE ROLE $role LOGIN PASSWORD '$password';
      END IF;
    END \$\$;"
  if [ -z "$("${psql[@]}" -tA -c "SELECT 1 FROM pg_database WHERE datname = '$database'")" ]; then
    "${psql[@]}" -c "CREATE DATABASE $database OWNER $role ENCODING 'UTF8' TEMPLATE template0"
  fi

  export DSH_PG_URL="postgres://$role:$password@$host:$port/$database"
  export DSH_PG_REQUIRED=1
  echo "postgres: cluster $version/$cluster is up on $host:$port; DSH_PG_URL names database $database (role $role); DSH_PG_REQUIRED=1"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  dsh_pg_main
  printf 'export DSH_PG_URL=%q\nexport DSH_PG_REQUIRED=1\n' "$DSH_PG_URL"
else
  dsh_pg_main || return 1
fi
