#!/usr/bin/env bash
# Installs the system tools the grading sandbox uses: bubblewrap (filesystem, network and
# process isolation), prlimit and setpriv (util-linux; per-process limits, and the unprivileged
# uid each kernel runs as). Per-submission limits also use cgroups where they are writable.
# Runs as part of `make`; needs root for apt-get. Without them grading still runs, but every
# report and the gradebook say loudly that submissions ran unsandboxed.
set -u
have() { command -v "$1" >/dev/null 2>&1; }
if have bwrap && have prlimit && have setpriv; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! have apt-get; then
  echo "sandbox: bubblewrap/prlimit missing and cannot install them (not root or no apt-get)." >&2
  echo "sandbox: install the Debian/Ubuntu packages 'bubblewrap' and 'util-linux'." >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq bubblewrap util-linux >/dev/null
have bwrap && have prlimit && have setpriv
