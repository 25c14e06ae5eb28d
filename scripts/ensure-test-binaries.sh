#!/usr/bin/env bash
# The tests drive real binaries: nats-server (every integration suite) and Debian's chromium (the
# dashboard's browser test). Installs whichever is missing with apt-get, when that is possible here;
# otherwise says how, and the suites that need it fail with the same instruction.
set -u
missing=()
command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo"; else
    echo "tests need: ${missing[*]} — install them with: sudo apt-get install -y ${missing[*]}" >&2
    exit 0
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "tests need: ${missing[*]} (no apt-get here: install them with your package manager)" >&2
  exit 0
fi
echo "installing ${missing[*]} for the tests (apt-get)"
$SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
