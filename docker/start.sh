#!/usr/bin/env bash
# vncua desktop: an X display with a window manager, a VNC server with a WebSocket endpoint,
# and Chromium with CDP. It is both the Docker image's entrypoint and the native "local"
# provider that launchDesktop() (harness/desktop/launch.ts) spawns.
#
#   Xvnc (TigerVNC)            X server + VNC server; X picks its display (-displayfd); RFB on
#                              a unix socket in the temp dir ($tmp/rfb.sock, mode 0600), and on
#                              127.0.0.1:<random port, retried on collision> only with a password
#     or, with --server x11vnc:
#   Xvfb + x11vnc              X server, then x11vnc on the same kind of unix socket (and, with
#                              a password, on 127.0.0.1:<first free port from a random base>)
#   matchbox-window-manager    so Chromium's kiosk window is exactly the screen at 0,0
#   ws-bridge.py (websockify)  WebSocket on <bind>:<OS-chosen port>, path /<token> only,
#                              relaying each client to the RFB unix socket
#   cdp-bridge.py + chromium   Chromium with --remote-debugging-pipe (no DevTools port at all),
#                              a fresh --user-data-dir and --app=URL; the bridge (started first,
#                              so that Python's start-up overlaps X's) serves CDP's HTTP +
#                              WebSocket endpoints on <bind>:<OS-chosen port> under /<token>/
#
# Security (README.md, "Security"): the desktop belongs to the user who started it.
#   - Everything lives in a fresh 0700 temp dir (umask 077): the X authority file, the RFB
#     socket, the token, the VNC password file, Chromium's profile and Chromium's TMPDIR.
#   - X: -auth with a fresh MIT-MAGIC-COOKIE-1 (no cookie, no connection), -nolisten tcp.
#   - VNC: no TCP port unless a password is set (VNC Authentication then guards it). The
#     WebSocket endpoint and CDP answer only under the per-desktop token (128 random bits).
#   - Secrets never reach argv (`ps`): the password comes from --password-file FILE or from
#     VNCUA_VNC_PASSWORD (unset at once) and reaches Xvnc/x11vnc as a vncpasswd file; the
#     token reaches the bridges as a file.
#   - Every part gets a scrubbed environment (scrub_environment): no API keys, no passwords.
#
# When every part answers (the RFB greeting through the WebSocket; Chromium's answer over the
# pipe, which the CDP bridge reports in a ready file) it prints ONE JSON line on stdout and keeps running until SIGTERM/SIGINT/SIGHUP, EOF on stdin
# (when stdin is a pipe), the death of its parent, or the death of any part. It then stops
# its whole process group (Chromium's helpers included), removes its temp dir and exits.
#
# Exit codes: 0 stopped, 1 a part died while running, 2 bad arguments (a bad password too),
#             3 bad size, 4 missing program, 5 start failed, 6 start timed out.
set -euo pipefail
export LC_ALL=C

readonly SELF_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

# Programs (overridable, e.g. to use Google Chrome).
XVNC=${VNCUA_XVNC:-Xvnc}
XVFB=${VNCUA_XVFB:-Xvfb}
X11VNC=${VNCUA_X11VNC:-x11vnc}
WM=${VNCUA_WM:-matchbox-window-manager}
WEBSOCKIFY=${VNCUA_WEBSOCKIFY:-websockify}
CHROMIUM=${VNCUA_CHROMIUM:-/usr/lib/chromium/chromium}

readonly CHROMIUM_FLAGS=(
  --no-sandbox --disable-gpu --no-first-run --no-default-browser-check
  --disable-background-networking --disable-component-update --disable-sync --disable-quic
  --disable-dev-shm-usage --ozone-platform=x11 --password-store=basic --use-mock-keychain
  --disable-features=Translate,MediaRouter,OptimizationHints --disable-default-apps
  --disable-extensions --disable-smooth-scrolling --kiosk
)
# (Not --disable-crashpad-for-testing: with it Chromium 156's network service crashes in a
# loop, "FD ownership violation", and the window stays white. Crashpad's handler daemonizes
# out of our process group instead; teardown finds it by the tag in its environment.)

# The parts' environment (scrub_environment): PATH, HOME, LC_ALL=C, TMPDIR (inside our temp dir),
# XAUTHORITY, our tag, DISPLAY, and these when set. Proxy settings pass too, unless they hold
# credentials (user:password@). Nothing else (no API keys, no passwords) reaches a part.
readonly CHILD_ENV_NAMES=(USER LOGNAME LANG LANGUAGE TZ XDG_RUNTIME_DIR XDG_CONFIG_HOME XDG_CACHE_HOME
  XDG_DATA_HOME XDG_DATA_DIRS XDG_CONFIG_DIRS FONTCONFIG_FILE FONTCONFIG_PATH)
readonly CHILD_PROXY_NAMES=(http_proxy https_proxy no_proxy all_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY ALL_PROXY)

readonly MIN_SIDE=16 MAX_SIDE=8192

# Options (see usage).
size=1280x800
server=xvnc
url=about:blank
password=""
password_env_set=""
password_env=""
password_file=""
bind=127.0.0.1
ws_port=0
cdp_port=0
rfb_port=0
timeout_s=30
json=0

# State.
tmp=""
token=""
width=0 height=0 display=""
xvnc_pid="" vnc_pid="" wm_pid="" ws_pid="" chromium_pid=""
ws_listen_port="" cdp_listen_port="" rfb_listen_port=""
SLEEP_FD=""
GO_FD=""
found_port=""
deadline_ms=0
members=()

usage() {
  cat <<'EOF'
usage: start.sh [--size WxH] [--url URL] [--password-file FILE] [--bind 127.0.0.1|0.0.0.0]
                [--server xvnc|x11vnc] [--ws-port N] [--cdp-port N] [--rfb-port N]
                [--timeout SECONDS] [--json]

  --size WxH       screen size (default 1280x800, each side 16..8192)
  --server S       VNC server: xvnc (TigerVNC, default) or x11vnc (Xvfb + x11vnc)
  --url URL        page Chromium opens (default about:blank)
  --password-file FILE
                   require VNC Authentication with the password on FILE's first line
                   (or env VNCUA_VNC_PASSWORD; set but empty is an error). Only its first 8
                   characters count (VNC Authentication's limit). With a password the VNC
                   server also listens on 127.0.0.1 (tcpUrl). --password P is refused:
                   `ps` would show it.
  --bind ADDR      address of the WebSocket and CDP endpoints (default 127.0.0.1; use 0.0.0.0
                   inside a container). Both answer only under the desktop's token.
  --ws-port N      WebSocket port (default 0: the OS picks one)
  --cdp-port N     CDP port (default 0: the OS picks one)
  --rfb-port N     plain RFB port, with a password only (default 0: a random free port)
  --timeout S      give up starting after S seconds (default 30)
  --json           also report errors as one JSON line {"error": CODE, "message": ...} on stdout

Environment: VNCUA_VNC_PASSWORD (the password), VNCUA_XVNC, VNCUA_WM, VNCUA_WEBSOCKIFY,
VNCUA_CHROMIUM (other programs to run for each part). The parts get a scrubbed environment.

Prints one JSON line when ready (TOKEN: 32 hex digits, new for every desktop):
  {"vncUrl":"ws://127.0.0.1:P/TOKEN","cdpUrl":"http://127.0.0.1:Q/TOKEN/","tcpUrl":null,
   "rfbSocket":"/tmp/vncua-desktop.X/rfb.sock","xauthority":"/tmp/vncua-desktop.X/Xauthority",
   "display":":N","pid":PID,"rfbPort":null,"wsPort":P,"cdpPort":Q,"width":W,"height":H,
   "url":URL,"tmpDir":"/tmp/vncua-desktop.X","server":"xvnc","vncAuth":false}
(with a password: "tcpUrl":"tcp://127.0.0.1:R","rfbPort":R,"vncAuth":true)
and runs until SIGTERM/SIGINT/SIGHUP, EOF on a piped stdin, or its parent's death.
Health, without the token: GET http://127.0.0.1:Q/health answers 200 once Chromium does.
EOF
}

# ---------------------------------------------------------------- output helpers

# json_str TEXT: TEXT as a JSON string literal (in $REPLY, no subshell).
json_str() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  s=${s//[$'\x01'-$'\x1f']/ }
  REPLY="\"$s\""
}

log() { printf 'start.sh: %s\n' "$*" >&2 || true; }

# fail CODE EXIT_STATUS MESSAGE [KEY VALUE]...: report an error and exit (cleanup runs on EXIT).
fail() {
  local code=$1 status=$2 message=$3 line
  shift 3
  log "$code: $message"
  if [ "$json" = 1 ]; then
    json_str "$message"
    line="{\"error\":\"$code\",\"message\":$REPLY"
    while [ $# -ge 2 ]; do
      json_str "$2"
      line+=",\"$1\":$REPLY"
      shift 2
    done
    printf '%s}\n' "$line" || true
  fi
  exit "$status"
}

# log_tail NAME: the last lines of a part's log, for error messages.
log_tail() {
  local f="$tmp/$1.log"
  [ -s "$f" ] || { REPLY="(no output)"; return; }
  REPLY=$(tail -n 15 -- "$f" 2>/dev/null | grep -v -e 'dbus' -e '^$' | tail -n 8 || true)
}

# ---------------------------------------------------------------- arguments

parse_args() {
  local arg
  while [ $# -gt 0 ]; do
    arg=$1
    case $arg in
      --json) json=1; shift; continue ;;
      -h | --help) usage; exit 0 ;;
      --*=*) set -- "${arg%%=*}" "${arg#*=}" "${@:2}"; arg=$1 ;;
    esac
    case $arg in
      --password)
        fail DESKTOP_ERR_BAD_PASSWORD 2 "--password is refused: \`ps\` would show the password to every user; use --password-file FILE or the environment variable VNCUA_VNC_PASSWORD"
        ;;
      --size | --url | --password-file | --bind | --server | --ws-port | --cdp-port | --rfb-port | --timeout)
        [ $# -ge 2 ] || fail DESKTOP_ERR_START_FAILED 2 "$arg needs a value (see --help)"
        ;;
      *) fail DESKTOP_ERR_START_FAILED 2 "unknown argument '${arg%%=*}' (see --help)" ;;
    esac
    case $arg in
      --size) size=$2 ;;
      --url) url=$2 ;;
      --password-file) password_file=$2 ;;
      --bind) bind=$2 ;;
      --server) server=$2 ;;
      --ws-port) ws_port=$2 ;;
      --cdp-port) cdp_port=$2 ;;
      --rfb-port) rfb_port=$2 ;;
      --timeout) timeout_s=$2 ;;
    esac
    shift 2
  done
}

validate_args() {
  if [[ ! $size =~ ^([0-9]{1,5})x([0-9]{1,5})$ ]]; then
    fail DESKTOP_ERR_BAD_SIZE 3 "bad --size '$size': expected WxH such as 1280x800"
  fi
  width=$((10#${BASH_REMATCH[1]}))
  height=$((10#${BASH_REMATCH[2]}))
  if ((width < MIN_SIDE || width > MAX_SIDE || height < MIN_SIDE || height > MAX_SIDE)); then
    fail DESKTOP_ERR_BAD_SIZE 3 "bad --size '$size': each side must be between $MIN_SIDE and $MAX_SIDE"
  fi
  case $server in
    xvnc | x11vnc) ;;
    *) fail DESKTOP_ERR_START_FAILED 2 "bad --server '$server': expected xvnc or x11vnc" ;;
  esac
  if [[ ! $bind =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; then
    fail DESKTOP_ERR_START_FAILED 2 "bad --bind '$bind': expected an IPv4 address such as 127.0.0.1 or 0.0.0.0"
  fi
  local name value
  for name in ws_port cdp_port rfb_port; do
    value=${!name}
    if [[ ! $value =~ ^[0-9]{1,5}$ ]] || ((10#$value > 65535)); then
      fail DESKTOP_ERR_START_FAILED 2 "bad --${name/_/-} '$value': expected a port number (0 = any)"
    fi
    printf -v "$name" '%d' "$((10#$value))"
  done
  if [[ ! $timeout_s =~ ^[0-9]+$ ]] || ((timeout_s < 1)); then
    fail DESKTOP_ERR_START_FAILED 2 "bad --timeout '$timeout_s': expected whole seconds >= 1"
  fi
  read_password
  if [ -z "$password" ] && [ "$rfb_port" != 0 ]; then
    fail DESKTOP_ERR_START_FAILED 2 "--rfb-port needs a password: the plain RFB port is only opened with VNC Authentication (use --password-file FILE or VNCUA_VNC_PASSWORD)"
  fi
}

# The password, from --password-file or VNCUA_VNC_PASSWORD; an empty or unreadable one is an
# error, never "no password". Messages name the source, never the password.
read_password() {
  if [ -n "$password_file" ] && [ -n "$password_env_set" ]; then
    fail DESKTOP_ERR_BAD_PASSWORD 2 "both --password-file and VNCUA_VNC_PASSWORD are set: give the password once"
  fi
  if [[ $password_file =~ ^/dev/fd/([0-9]+)$ ]]; then
    # An inherited descriptor (launchDesktop passes a socketpair on fd 3, which cannot be
    # reopened through /dev/fd): read it as is, then close it so no part inherits it.
    local fdn=${BASH_REMATCH[1]}
    { IFS= read -r password <&"$fdn"; } 2>/dev/null || true
    exec {fdn}<&- 2>/dev/null || true
    [ -n "$password" ] || fail DESKTOP_ERR_BAD_PASSWORD 2 "no password arrived on $password_file (closed, empty, or not open)"
  elif [ -n "$password_file" ]; then
    if [ -d "$password_file" ] || [ ! -r "$password_file" ]; then
      fail DESKTOP_ERR_BAD_PASSWORD 2 "cannot read the password file '$password_file' (missing, a directory, or not readable)"
    fi
    IFS= read -r password <"$password_file" 2>/dev/null || true
    [ -n "$password" ] || fail DESKTOP_ERR_BAD_PASSWORD 2 "the password file '$password_file' is empty: write the password on its first line"
    if [ -f "$password_file" ]; then
      local mode
      mode=$(stat -Lc %a -- "$password_file" 2>/dev/null || echo 600)
      if (((8#$mode & 8#077) != 0)); then
        log "warning: the password file '$password_file' is readable by other users (mode $mode): chmod 600 it"
      fi
    fi
  elif [ -n "$password_env_set" ]; then
    [ -n "$password_env" ] || fail DESKTOP_ERR_BAD_PASSWORD 2 "VNCUA_VNC_PASSWORD is set but empty: set a password, or unset it for a desktop without VNC Authentication"
    password=$password_env
  fi
  password_env=""
  if [ "${#password}" -gt 8 ]; then log "note: VNC Authentication uses only the first 8 characters of the password"; fi
}

# require PROGRAM PACKAGE: fail with DESKTOP_ERR_MISSING_BINARY when PROGRAM is not installed.
require() {
  command -v -- "$1" >/dev/null 2>&1 && return 0
  fail DESKTOP_ERR_MISSING_BINARY 4 "'$1' is not installed: run apt-get install $2" program "$1" package "$2"
}

check_programs() {
  if [ "$server" = x11vnc ]; then
    require "$XVFB" xvfb
    require "$X11VNC" x11vnc
  else
    require "$XVNC" tigervnc-standalone-server
  fi
  require "$WM" matchbox-window-manager
  require "$WEBSOCKIFY" websockify
  require "$CHROMIUM" chromium
  require python3 python3
  require setsid util-linux
  if [ -n "$password" ]; then require vncpasswd tigervnc-tools; fi
}

# websockify's own Python (from its #! line), else python3: ws-bridge.py imports websockify with
# it; cdp-bridge.py runs on it too (the system's Python, not a shim of a version manager).
websockify_python() {
  local path line
  path=$(command -v -- "$WEBSOCKIFY")
  IFS= read -r line <"$path" || true
  line=${line#\#!}
  line=${line# }
  case $line in
    /usr/bin/env\ *) line=${line#/usr/bin/env }; line=${line%% *} ;;
    *) line=${line%% *} ;;
  esac
  case ${line##*/} in
    python*) REPLY=$line ;;
    *) REPLY=python3 ;;
  esac
}

# ---------------------------------------------------------------- secrets and environment

# random_hex128: 128 random bits as 32 hex digits, in $REPLY: bash's SRANDOM (the kernel's
# getrandom(), no fork), else od on /dev/urandom.
random_hex128() {
  if [ -n "${SRANDOM:-}" ]; then
    printf -v REPLY '%08x%08x%08x%08x' "$SRANDOM" "$SRANDOM" "$SRANDOM" "$SRANDOM"
  else
    REPLY=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  fi
  [[ $REPLY =~ ^[0-9a-f]{32}$ ]] || fail DESKTOP_ERR_START_FAILED 5 "could not get 16 random bytes from the kernel"
}

# A fresh token (128 random bits, 32 hex digits) in $token and $tmp/token; a fresh X cookie in
# $tmp/Xauthority. The X entry is FamilyWild with no display number, so it matches whichever
# display X picks (-displayfd); the server loads every cookie of its -auth file.
make_secrets() {
  local cookie esc="" i
  random_hex128
  token=$REPLY
  printf '%s\n' "$token" >"$tmp/token"
  random_hex128
  cookie=$REPLY
  for ((i = 0; i < 32; i += 2)); do esc+="\\x${cookie:i:2}"; done
  # family 0xffff (wild), address "", number "", name "MIT-MAGIC-COOKIE-1", data: the cookie.
  { printf '\xff\xff\x00\x00\x00\x00\x00\x12MIT-MAGIC-COOKIE-1\x00\x10' && printf "$esc"; } >"$tmp/Xauthority"
  if [ -n "$password" ]; then
    printf '%s\n' "$password" | vncpasswd -f >"$tmp/passwd" 2>>"$tmp/vncpasswd.log" ||
      fail DESKTOP_ERR_START_FAILED 5 "vncpasswd failed"
  fi
}

# scrub_environment: from here on every process we start inherits only the allowlist: PATH,
# HOME, LC_ALL=C, TMPDIR, XAUTHORITY, CHILD_ENV_NAMES, and the proxy settings without
# credentials (DISPLAY is added once X is up, our tag by spawn). Everything else loses its export attribute
# (no fork, no env(1) per part).
scrub_environment() {
  local name value
  local -a names fns
  local -A allowed=([PATH]=1 [HOME]=1)
  for name in "${CHILD_ENV_NAMES[@]}"; do allowed[$name]=1; done
  for name in "${CHILD_PROXY_NAMES[@]}"; do
    value=${!name-}
    [[ $value == *@* ]] || allowed[$name]=1
  done
  # Builtins writing to a file, then read back: no fork.
  compgen -e >"$tmp/env.names"
  mapfile -t names <"$tmp/env.names"
  declare -Fx >"$tmp/env.names" # exported shell functions (BASH_FUNC_*): none either
  mapfile -t fns <"$tmp/env.names"
  for name in "${names[@]}"; do
    [ -n "${allowed[$name]-}" ] || export -n -- "$name" 2>/dev/null || true
  done
  for name in "${fns[@]}"; do export -nf -- "${name##* }" 2>/dev/null || true; done
  export HOME=${HOME:-/} LC_ALL=C TMPDIR="$tmp/tmp" XAUTHORITY="$tmp/Xauthority"
}

# ---------------------------------------------------------------- process helpers

# Our children go in our process group; make sure we lead one so teardown can find them all.
is_group_leader() {
  local stat
  read -r stat </proc/$$/stat
  set -- ${stat##*) }
  [ "$3" = "$$" ]
}

current_ppid() {
  local stat
  read -r stat </proc/$$/stat
  set -- ${stat##*) }
  REPLY=$2
}

# alive PID: the process exists and is not a zombie.
alive() {
  local stat
  [ -n "$1" ] || return 1
  read -r stat 2>/dev/null </proc/"$1"/stat || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# snooze SECONDS: sleep without forking (a read that times out on a private fifo).
snooze() { read -r -t "$1" -u "$SLEEP_FD" _ || true; }

now_ms() { local t=${EPOCHREALTIME/./}; REPLY=$((t / 1000)); }

# spawn NAME COMMAND...: run a part in the background (with the scrubbed environment), its
# output in $tmp/NAME.log. Every part carries VNCUA_DESKTOP_TAG=$tmp in its environment, so
# teardown can find processes that left our process group (Chromium's crashpad handler).
spawn() {
  local name=$1
  shift
  # (The tag only on parts: the grep of tagged_processes must not carry it.)
  VNCUA_DESKTOP_TAG=$tmp "$@" </dev/null >>"$tmp/$name.log" 2>&1 {SLEEP_FD}<&- {GO_FD}<&- &
}

# tagged_processes: pids whose environment holds our tag (in $members).
tagged_processes() {
  members=()
  [ -n "$tmp" ] || return 0
  mapfile -t members < <(grep -lzxF -- "VNCUA_DESKTOP_TAG=$tmp" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
}

# group_members: live, non-zombie processes of our process group other than us (in $members).
group_members() {
  local f stat rest pid
  members=()
  for f in /proc/[0-9]*/stat; do
    read -r stat 2>/dev/null <"$f" || continue
    rest=${stat##*) }
    set -- $rest
    [ "$3" = "$$" ] && [ "$1" != Z ] || continue
    pid=${f#/proc/}
    pid=${pid%/stat}
    [ "$pid" != "$$" ] && members+=("$pid")
  done
  return 0
}

# listen_port PID: the TCP port PID listens on, in $found_port ("" if none yet).
listen_port() {
  local hex
  hex=$(ls -l "/proc/$1/fd" 2>/dev/null | awk '
    FNR == NR { if (match($0, /socket:\[[0-9]+\]/)) inode[substr($0, RSTART + 8, RLENGTH - 9)] = 1; next }
    $4 == "0A" && ($10 in inode) { n = split($2, a, ":"); print a[n]; exit }
  ' - /proc/net/tcp 2>/dev/null) || true
  if [ -n "$hex" ]; then found_port=$((16#$hex)); else found_port=""; fi
}

# ---------------------------------------------------------------- readiness probes

# probe_ws PORT: a WebSocket handshake on PORT (path /<token>) answers with the 12-byte RFB greeting.
probe_ws() (
  local fd status line frame
  exec {fd}<>"/dev/tcp/127.0.0.1/$1" || exit 1
  printf 'GET /%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dmluY3VhLXByb2JlLWtleQ==\r\nSec-WebSocket-Version: 13\r\n\r\n' "$token" "$1" >&"$fd"
  IFS= read -r -t 2 -u "$fd" status || exit 1
  [[ $status == "HTTP/1.1 101 "* ]] || exit 1
  while IFS= read -r -t 2 -u "$fd" line; do
    [ "$line" = $'\r' ] && break
  done
  # One binary frame: 0x82, length 12, then "RFB 003.00x\n".
  IFS= read -r -t 2 -N 14 -u "$fd" frame || exit 1
  [[ ${frame:2} == "RFB 003."* ]]
)

# ---------------------------------------------------------------- parts

# The WebSocket endpoint: ws-bridge.py (websockify under /<token>) -> the RFB unix socket.
start_bridge() {
  websockify_python
  spawn websockify "$REPLY" "$SELF_DIR/ws-bridge.py" --token-file "$tmp/token" "$bind:$ws_port" --unix-target="$tmp/rfb.sock"
  ws_pid=$!
}

# -UseBlacklist=0: Xvnc otherwise refuses a host for 10 s after 5 connections that closed
# before authenticating, which readiness probes and reconnecting agents do all the time
# (everything behind the bridge's unix socket counts as one host).
# Xvnc picks its display itself (-displayfd). Without a password it has no TCP port
# (-rfbport -1). With one, it cannot pick its own RFB port (-rfbport 0 means 5900+display), so
# we try random ports of the OS's ephemeral range: binding is the atomic check, and a collision
# ("Address already in use") retries with another port.
start_xvnc() {
  local attempt port lo hi security=(-SecurityTypes None) tcp=(-rfbport -1)
  read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
  if [ -n "$password" ]; then security=(-SecurityTypes VncAuth -PasswordFile "$tmp/passwd"); fi
  for attempt in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
    if [ -n "$password" ]; then
      port=$rfb_port
      if [ "$port" = 0 ]; then port=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1))); fi
      tcp=(-interface 127.0.0.1 -rfbport "$port")
    fi
    : >"$tmp/display" >"$tmp/xvnc.log"
    spawn xvnc "$XVNC" -displayfd 3 3>"$tmp/display" -auth "$tmp/Xauthority" -geometry "${width}x$height" -depth 24 \
      "${security[@]}" "${tcp[@]}" -rfbunixpath "$tmp/rfb.sock" -rfbunixmode 0600 \
      -AlwaysShared -UseBlacklist=0 -nolisten tcp -desktop vncua
    xvnc_pid=$!
    while :; do
      IFS= read -r display 2>/dev/null <"$tmp/display" && [ -n "$display" ] && {
        [ -z "$password" ] || rfb_listen_port=$port
        export DISPLAY=":$display"
        return 0
      }
      alive "$xvnc_pid" || break
      check_deadline
      snooze 0.005
    done
    wait "$xvnc_pid" 2>/dev/null || true
    if [ -n "$password" ] && grep -q 'Address already in use' "$tmp/xvnc.log" && [ "$rfb_port" = 0 ]; then continue; fi
    log_tail xvnc
    fail DESKTOP_ERR_START_FAILED 5 "Xvnc did not start: $REPLY"
  done
  fail DESKTOP_ERR_START_FAILED 5 "Xvnc found no free RFB port after 16 tries"
}

# Xvfb picks its display itself (-displayfd).
start_xvfb() {
  : >"$tmp/display"
  spawn xvfb "$XVFB" -displayfd 3 3>"$tmp/display" -auth "$tmp/Xauthority" -screen 0 "${width}x${height}x24" -nolisten tcp
  xvnc_pid=$!
  while :; do
    IFS= read -r display 2>/dev/null <"$tmp/display" && [ -n "$display" ] && export DISPLAY=":$display" && return 0
    alive "$xvnc_pid" || { log_tail xvfb; fail DESKTOP_ERR_START_FAILED 5 "Xvfb did not start: $REPLY"; }
    check_deadline
    snooze 0.005
  done
}

# x11vnc serves the unix socket; with a password also 127.0.0.1:<port>, probing for a free port
# itself from a random base in the ephemeral range (binding is the atomic check), then printing
# PORT=N. -rfbportv6 -1: otherwise it also listens on [::]:5900 even with -rfbport 0.
start_x11vnc() {
  local lo hi base auth=(-nopw) tcp=(-rfbport 0)
  if [ -n "$password" ]; then
    read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
    base=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo - 200)))
    [ "$rfb_port" = 0 ] || base=$rfb_port
    auth=(-rfbauth "$tmp/passwd")
    tcp=(-listen 127.0.0.1 -autoport "$base") # not -localhost: its allow list refuses the unix socket's clients
  fi
  spawn x11vnc "$X11VNC" -display ":$display" -auth "$tmp/Xauthority" -unixsock "$tmp/rfb.sock" \
    "${tcp[@]}" -rfbportv6 -1 -shared -forever "${auth[@]}" -desktop vncua -norc -nossl -nocmds -noipv6 -quiet
  vnc_pid=$!
  while :; do
    if [ -S "$tmp/rfb.sock" ]; then
      [ -z "$password" ] && return 0
      local line
      line=$(grep -m1 -o '^PORT=[0-9]*' "$tmp/x11vnc.log" || true)
      if [ -n "$line" ]; then
        rfb_listen_port=${line#PORT=}
        return 0
      fi
    fi
    alive "$vnc_pid" || { log_tail x11vnc; fail DESKTOP_ERR_START_FAILED 5 "x11vnc did not start: $REPLY"; }
    check_deadline
    snooze 0.005
  done
}

start_wm() {
  spawn wm "$WM" -use_titlebar no -use_cursor yes
  wm_pid=$!
}

# cdp-bridge.py, started before X so that Python's start-up overlaps X's; it starts Chromium (its
# child, CDP over --remote-debugging-pipe) once start_chromium gives it the display, and serves CDP
# on <bind>:<cdp port> under /<token>/.
start_cdp_bridge() {
  # --app=about:blank opens Chromium's third-party new-tab page instead, which attaches over CDP
  # slowly (5 s, sometimes 30 s and more for Playwright's connectOverCDP): open an empty page.
  local app_url=$url
  [ "$url" = about:blank ] && app_url='data:text/html,'
  websockify_python
  spawn chromium "$REPLY" -S "$SELF_DIR/cdp-bridge.py" "$bind" "$cdp_port" "$tmp/token" "$tmp/cdp.port" "$tmp/cdp.go" -- \
    "$CHROMIUM" --remote-debugging-pipe --user-data-dir="$tmp/chromium" "${CHROMIUM_FLAGS[@]}" --app="$app_url"
  chromium_pid=$!
}

# Chromium: the bridge starts it on the display written to its go fifo.
start_chromium() {
  printf '%s\n' "$DISPLAY" >&"$GO_FD"
}

# check_parts PHASE: fail when a part has died.
check_parts() {
  local name pid
  for name in xvnc xvfb x11vnc wm websockify chromium; do
    case $name in
      xvnc) pid=$xvnc_pid; [ "$server" = xvnc ] || continue ;;
      xvfb) pid=$xvnc_pid; [ "$server" = x11vnc ] || continue ;;
      x11vnc) pid=$vnc_pid ;; wm) pid=$wm_pid ;; websockify) pid=$ws_pid ;;
      chromium) pid=$chromium_pid ;;
    esac
    [ -z "$pid" ] || alive "$pid" && continue
    log_tail "$name"
    if [ "$1" = start ]; then fail DESKTOP_ERR_START_FAILED 5 "$name exited while starting: $REPLY"; fi
    log "$name exited: $REPLY"
    exit 1
  done
}

check_deadline() {
  now_ms
  ((REPLY < deadline_ms)) && return 0
  fail DESKTOP_ERR_TIMEOUT 6 "the desktop was not ready after ${timeout_s}s"
}

# Poll every 10 ms until the RFB greeting arrives through the WebSocket and CDP answers (the
# bridge's ready file).
wait_ready() {
  local ws_ok="" cdp_ok=""
  while :; do
    check_parts start
    if [ -z "$ws_listen_port" ]; then
      listen_port "$ws_pid"
      ws_listen_port=$found_port
    fi
    if [ -z "$ws_ok" ] && [ -n "$ws_listen_port" ] && probe_ws "$ws_listen_port" 2>/dev/null; then ws_ok=1; fi
    # The bridge writes its port once Chromium has answered it over the pipe, its HTTP server
    # already listening: that is CDP ready (no polling of a port that is not ready yet).
    if [ -z "$cdp_ok" ] && [ -s "$tmp/cdp.port" ]; then
      IFS= read -r cdp_listen_port <"$tmp/cdp.port" || true
      if [[ $cdp_listen_port =~ ^[0-9]+$ ]]; then cdp_ok=1; fi
    fi
    [ -n "$ws_ok" ] && [ -n "$cdp_ok" ] && return 0
    check_deadline
    snooze 0.01
  done
}

print_ready() {
  local url_json tmp_json tcp_json=null port_json=null auth=false
  json_str "$url"
  url_json=$REPLY
  json_str "$tmp"
  tmp_json=$REPLY
  if [ -n "$rfb_listen_port" ]; then
    tcp_json="\"tcp://127.0.0.1:$rfb_listen_port\""
    port_json=$rfb_listen_port
  fi
  [ -z "$password" ] || auth=true
  printf '{"vncUrl":"ws://127.0.0.1:%s/%s","cdpUrl":"http://127.0.0.1:%s/%s/","tcpUrl":%s,"rfbSocket":"%s/rfb.sock","xauthority":"%s/Xauthority","display":":%s","pid":%s,"rfbPort":%s,"wsPort":%s,"cdpPort":%s,"width":%s,"height":%s,"url":%s,"tmpDir":%s,"server":"%s","vncAuth":%s}\n' \
    "$ws_listen_port" "$token" "$cdp_listen_port" "$token" "$tcp_json" "${tmp_json:1:-1}" "${tmp_json:1:-1}" "$display" "$$" \
    "$port_json" "$ws_listen_port" "$cdp_listen_port" "$width" "$height" "$url_json" "$tmp_json" "$server" "$auth"
}

# Run until a signal, EOF on a piped stdin, the parent's death, or a part's death.
watch_until_stopped() {
  local ppid0=$PPID watch_stdin=0 rc
  # Node's child pipes are socketpairs, a shell's are fifos.
  if [ -p /dev/stdin ] || [ -S /dev/stdin ]; then watch_stdin=1; fi
  while :; do
    if [ "$watch_stdin" = 1 ]; then
      if IFS= read -r -t 0.25 _; then :; else
        rc=$?
        ((rc > 128)) || exit 0 # EOF: whoever launched us is gone
      fi
    else
      snooze 0.25
    fi
    if ((ppid0 > 1)); then
      current_ppid
      [ "$REPLY" = "$ppid0" ] || exit 0
    fi
    check_parts run
  done
}

# ---------------------------------------------------------------- teardown

# TERM the whole group, wait up to 3 s, KILL what is left; then the tagged processes outside
# the group; then remove our X lock if Xvnc could not do it, and the temp dir (with Chromium's
# profile and TMPDIR: nothing of the desktop is left in the system's temp dir).
cleanup() {
  local status=$? i
  trap '' TERM INT HUP PIPE
  set +e
  kill -TERM -- -$$ 2>/dev/null
  for ((i = 0; i < 300; i++)); do
    group_members
    ((${#members[@]} == 0)) && break
    snooze 0.01
  done
  if ((${#members[@]} > 0)); then
    kill -KILL "${members[@]}" 2>/dev/null
    for ((i = 0; i < 100; i++)); do
      group_members
      ((${#members[@]} == 0)) && break
      snooze 0.01
    done
  fi
  for ((i = 0; i < 100; i++)); do
    tagged_processes
    ((${#members[@]} == 0)) && break
    if ((i < 50)); then kill -TERM "${members[@]}" 2>/dev/null; else kill -KILL "${members[@]}" 2>/dev/null; fi
    snooze 0.02
  done
  if [ -n "$display" ] && [ -n "$xvnc_pid" ] && ! alive "$xvnc_pid"; then
    local lock owner=""
    lock=/tmp/.X$display-lock
    read -r owner 2>/dev/null <"$lock"
    if [ "${owner// /}" = "$xvnc_pid" ]; then rm -f -- "$lock" "/tmp/.X11-unix/X$display"; fi
  fi
  [ -n "$tmp" ] && rm -rf -- "$tmp"
  exit "$status"
}

# ---------------------------------------------------------------- main

main() {
  local arg
  # The password from the environment: read, and the variable removed at once, so no process
  # started from here on inherits it.
  password_env_set=${VNCUA_VNC_PASSWORD+set}
  password_env=${VNCUA_VNC_PASSWORD-}
  unset VNCUA_VNC_PASSWORD
  for arg in "$@"; do [ "$arg" = --json ] && json=1; done
  parse_args "$@"
  validate_args
  check_programs

  umask 077
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/vncua-desktop.XXXXXX")
  trap cleanup EXIT
  trap 'exit 0' TERM INT HUP
  scrub_environment
  mkdir "$tmp/tmp"
  mkfifo "$tmp/sleep" "$tmp/cdp.go"
  exec {SLEEP_FD}<>"$tmp/sleep"
  exec {GO_FD}<>"$tmp/cdp.go" # read-write: never blocks, and keeps what we write until the bridge reads it
  now_ms
  deadline_ms=$((REPLY + timeout_s * 1000))
  make_secrets
  password=""
  [ ! -e "$tmp/passwd" ] || password=set # from here on: "a password is in use", not the password

  start_cdp_bridge # waits for the display
  if [ "$server" = x11vnc ]; then
    start_xvfb
    start_wm
    start_chromium
    start_x11vnc
    start_bridge
  else
    start_bridge # connects to the RFB unix socket per client
    start_xvnc
    start_wm
    start_chromium
  fi
  wait_ready
  print_ready
  watch_until_stopped
}

if ! is_group_leader; then exec setsid -- "$BASH" "$0" "$@"; fi
main "$@"
