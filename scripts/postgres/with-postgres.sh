#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server from Debian's packages:
#   scripts/postgres/with-postgres.sh cargo test -p grantmatch-server --test api
# The server lives in a temporary directory (initdb as an unprivileged user — the
# package's `postgres` user when run as root), listens on 127.0.0.1 at a free port and
# on a Unix socket in that directory, and is stopped and removed when the command ends.
# The command sees its URL in GRANTMATCH_TEST_DATABASE_URL. `postgresql` is installed
# with apt-get only when no initdb is found.
set -euo pipefail

find_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

BIN=$(find_bin)
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  echo "with-postgres: installing postgresql (Debian package)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  BIN=$(find_bin)
fi

DIR=$(mktemp -d /tmp/grantmatch-pg.XXXXXX)
RUN=()
if [ "$(id -u)" = 0 ]; then
  # initdb refuses to run as root: the package's `postgres` user, else `nobody`.
  PGUSER_OS=postgres
  id -u postgres >/dev/null 2>&1 || PGUSER_OS=nobody
  chown "$PGUSER_OS" "$DIR"
  RUN=(runuser -u "$PGUSER_OS" --)
fi
chmod 700 "$DIR"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

stop() {
  "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$DIR"
}
trap stop EXIT

"${RUN[@]}" "$BIN/initdb" -D "$DIR/data" -U grantmatch --auth=trust --no-sync -E UTF8 >"$DIR/initdb.log" 2>&1 \
  || { cat "$DIR/initdb.log" >&2; exit 1; }

# TLS (when openssl is there): a throw-away CA and a server certificate for the name
# postgres.test only (not 127.0.0.1), so that verify-full can be told from verify-ca.
# Plain connections stay possible (ssl=on only offers TLS). The tests get the CA in
# GRANTMATCH_TEST_TLS_ROOT_CERT and another CA, which signed nothing, in
# GRANTMATCH_TEST_TLS_OTHER_ROOT_CERT.
SSL_OPTS=""
if command -v openssl >/dev/null 2>&1; then
  T=$DIR/tls
  mkdir -p "$T"
  ( cd "$T"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=grantmatch test CA" \
      -keyout ca.key -out ca.pem
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=other test CA" \
      -keyout other.key -out other.pem
    openssl req -newkey rsa:2048 -nodes -subj "/CN=postgres.test" -keyout server.key -out server.csr
    printf 'subjectAltName=DNS:postgres.test\nbasicConstraints=CA:FALSE\n' > ext.cnf
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -extfile ext.cnf -out server.pem
  ) >"$DIR/openssl.log" 2>&1 || { cat "$DIR/openssl.log" >&2; exit 1; }
  chmod 600 "$T/server.key"
  if [ ${#RUN[@]} -gt 0 ]; then chown -R "$PGUSER_OS" "$T"; fi
  chmod 755 "$T"; chmod 644 "$T/ca.pem" "$T/other.pem"
  SSL_OPTS="-c ssl=on -c ssl_cert_file=$T/server.pem -c ssl_key_file=$T/server.key"
  export GRANTMATCH_TEST_TLS_ROOT_CERT=$T/ca.pem GRANTMATCH_TEST_TLS_OTHER_ROOT_CERT=$T/other.pem
fi

"${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -o \
  "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off $SSL_OPTS" \
  start >/dev/null || { cat "$DIR/server.log" >&2; exit 1; }

export GRANTMATCH_TEST_DATABASE_URL="postgres://grantmatch@127.0.0.1:$PORT/postgres"
echo "with-postgres: PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') at $GRANTMATCH_TEST_DATABASE_URL" >&2
set +e
"$@"
status=$?
set -e
exit $status
