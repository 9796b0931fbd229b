#!/usr/bin/env bash
# Installs Debian's PostgreSQL server binaries for the tests of a shared PostgreSQL gradebook
# (tests/autograder/test_postgres_gradebook.py), which start a throw-away server of their own
# with initdb + pg_ctl. Runs as part of `make`; needs root for apt-get. Without the binaries
# those tests are skipped and say why; the SQLite default needs nothing.
set -u
if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "postgres: server binaries missing and cannot install them (not root or no apt-get);" >&2
  echo "postgres: install the Debian/Ubuntu package 'postgresql' to run those tests." >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq postgresql >/dev/null
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
