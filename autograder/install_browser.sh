#!/usr/bin/env bash
# Installs Debian's Chromium for the end-to-end browser test (tests/ui/test_browser.py), which
# drives it with Playwright through `executable_path`: Playwright never downloads a browser.
# Runs as part of `make`; needs root for apt-get. Without Chromium the browser test is skipped
# and says why; nothing else needs it.
set -u
for name in chromium chromium-browser; do
  if command -v "$name" >/dev/null 2>&1; then exit 0; fi
done
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "browser: chromium missing and cannot install it (not root or no apt-get);" >&2
  echo "browser: install the Debian/Ubuntu package 'chromium' to run tests/ui." >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null
command -v chromium >/dev/null 2>&1
