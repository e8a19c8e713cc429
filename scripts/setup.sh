#!/usr/bin/env bash
# Installs what vncua needs on a fresh Debian/Ubuntu machine: the desktop's apt packages
# (Xvnc, a window manager, websockify, Chromium, peers used by tests and benchmarks)
# and, in a checkout, the npm dependencies. Idempotent and quiet when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  tigervnc-standalone-server tigervnc-tools matchbox-window-manager websockify chromium
  xdotool ffmpeg gvncviewer x11vnc xvfb x11-apps x11-utils x11-xserver-utils fonts-dejavu imagemagick
  qemu-system-x86 binutils tigervnc-scraping-server redis-server openssl
)
# One binary per package group, to decide whether apt is needed at all.
NEEDED_BINARIES=(Xvnc vncpasswd matchbox-window-manager websockify /usr/lib/chromium/chromium xdotool ffmpeg gvnccapture x11vnc Xvfb xwd xdpyinfo qemu-system-x86_64 as x0vncserver redis-server openssl)

missing=()
for b in "${NEEDED_BINARIES[@]}"; do
  command -v "$b" >/dev/null 2>&1 || [ -x "$b" ] || missing+=("$b")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "vncua setup: installing desktop packages (missing: ${missing[*]})" >&2
  SUDO=""
  if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      echo "vncua setup: need root to run: apt-get install -y ${APT_PACKAGES[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${APT_PACKAGES[@]}" >/dev/null
fi

# Only in a checkout: an installed vncua (node_modules/vncua, no lockfile) got its dependencies from npm install.
if [ -f package-lock.json ] && { [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
  echo "vncua setup: installing npm dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi
