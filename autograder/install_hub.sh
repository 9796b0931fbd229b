#!/usr/bin/env bash
# Installs configurable-http-proxy, the proxy JupyterHub starts in front of every user's
# server, from npm, for the JupyterHub test (tests/hub/). JupyterHub itself comes from PyPI
# with the `dev` extra. Runs as part of `make`; needs npm (and root for a global install).
# Without it the hub test is skipped and says why; nothing else needs it.
set -u
VERSION=5.3.0   # the version the hub test ran with
if command -v configurable-http-proxy >/dev/null 2>&1; then exit 0; fi
if ! command -v npm >/dev/null 2>&1; then
  echo "hub: configurable-http-proxy missing and npm is not installed;" >&2
  echo "hub: install Node.js and npm, then: npm install -g configurable-http-proxy@$VERSION" >&2
  exit 1
fi
npm install --global --silent "configurable-http-proxy@$VERSION" >/dev/null
command -v configurable-http-proxy >/dev/null 2>&1
