#!/usr/bin/env bash
# vncua desktop: an X display with a window manager, a VNC server with a WebSocket endpoint,
# and Chromium with CDP. It is both the Docker image's entrypoint and the native "local"
# provider that launchDesktop() (harness/desktop/launch.ts) spawns.
#
#   Xvnc (TigerVNC)            X server + VNC server; X picks its display (-displayfd);
#                              RFB on 127.0.0.1:<random port, retried on collision>
#                              and on a unix socket in the temp dir
#     or, with --server x11vnc:
#   Xvfb + x11vnc              X server, then x11vnc on 127.0.0.1:<first free port from a
#                              random base> (a second VNC server, for interoperability)
#   matchbox-window-manager    so Chromium's kiosk window is exactly the screen at 0,0
#   websockify (ws-bridge.py)  WebSocket -> Xvnc's unix socket, on <bind>:<OS-chosen port>
#   chromium                   --remote-debugging-port=0, fresh --user-data-dir, --app=URL
#   tcp-forward.py             only with --bind other than 127.0.0.1: <bind>:<port> -> CDP
#                              (Chromium binds CDP to 127.0.0.1 only)
#
# When every part answers (the RFB greeting through the WebSocket, CDP /json/version) it
# prints ONE JSON line on stdout and keeps running until SIGTERM/SIGINT/SIGHUP, EOF on stdin
# (when stdin is a pipe), the death of its parent, or the death of any part. It then stops
# its whole process group (Chromium's helpers included), removes its temp dir and exits.
#
# Exit codes: 0 stopped, 1 a part died while running, 2 bad arguments, 3 bad size,
#             4 missing program, 5 start failed, 6 start timed out.
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

readonly MIN_SIDE=16 MAX_SIDE=8192

# Options (see usage).
size=1280x800
server=xvnc
url=about:blank
password=${VNCUA_VNC_PASSWORD:-}
bind=127.0.0.1
ws_port=0
cdp_port=0
rfb_port=0
timeout_s=30
json=0

# State.
tmp=""
width=0 height=0 display=""
xvnc_pid="" vnc_pid="" wm_pid="" ws_pid="" chromium_pid="" fwd_pid=""
ws_listen_port="" cdp_local_port="" cdp_public_port="" rfb_listen_port=""
SLEEP_FD=""
found_port=""
deadline_ms=0
members=()

usage() {
  cat <<'EOF'
usage: start.sh [--size WxH] [--url URL] [--password P] [--bind 127.0.0.1|0.0.0.0]
                [--server xvnc|x11vnc] [--ws-port N] [--cdp-port N] [--rfb-port N]
                [--timeout SECONDS] [--json]

  --size WxH       screen size (default 1280x800, each side 16..8192)
  --server S       VNC server: xvnc (TigerVNC, default) or x11vnc (Xvfb + x11vnc)
  --url URL        page Chromium opens (default about:blank)
  --password P     require VNC Authentication with this password (or env VNCUA_VNC_PASSWORD);
                   without it the server offers security type None
  --bind ADDR      address of the WebSocket and CDP endpoints (default 127.0.0.1; use 0.0.0.0
                   inside a container). Xvnc's plain RFB port always stays on 127.0.0.1.
  --ws-port N      WebSocket port (default 0: the OS picks one)
  --cdp-port N     CDP port (default 0: the OS picks one)
  --rfb-port N     Xvnc RFB port (default 0: a random free port, retried on collision)
  --timeout S      give up starting after S seconds (default 30)
  --json           also report errors as one JSON line {"error": CODE, "message": ...} on stdout

Environment: VNCUA_VNC_PASSWORD (the password, kept out of `ps`), VNCUA_XVNC, VNCUA_WM,
VNCUA_WEBSOCKIFY, VNCUA_CHROMIUM (other programs to run for each part).

Prints one JSON line when ready:
  {"vncUrl":"ws://127.0.0.1:P","tcpUrl":"tcp://127.0.0.1:R","cdpUrl":"http://127.0.0.1:Q",
   "display":":N","pid":PID,"rfbPort":R,"wsPort":P,"cdpPort":Q,"width":W,"height":H,...}
and runs until SIGTERM/SIGINT/SIGHUP, EOF on a piped stdin, or its parent's death.
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
      --size | --url | --password | --bind | --server | --ws-port | --cdp-port | --rfb-port | --timeout)
        [ $# -ge 2 ] || fail DESKTOP_ERR_START_FAILED 2 "$arg needs a value (see --help)"
        ;;
      *) fail DESKTOP_ERR_START_FAILED 2 "unknown argument '$arg' (see --help)" ;;
    esac
    case $arg in
      --size) size=$2 ;;
      --url) url=$2 ;;
      --password) password=$2 ;;
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
  require setsid util-linux
  if [ -n "$password" ]; then require vncpasswd tigervnc-tools; fi
}

# websockify's own Python (from its #! line): ws-bridge.py imports websockify with it.
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
    *) REPLY="" ;;
  esac
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

# spawn NAME COMMAND...: run a part in the background, its output in $tmp/NAME.log. Every
# part and everything it starts carries VNCUA_DESKTOP_TAG=$tmp in its environment, so
# teardown can find processes that left our process group (Chromium's crashpad handler).
spawn() {
  local name=$1
  shift
  VNCUA_DESKTOP_TAG=$tmp "$@" </dev/null >>"$tmp/$name.log" 2>&1 {SLEEP_FD}<&- &
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

# probe_ws PORT: a WebSocket handshake on PORT answers with the 12-byte RFB greeting.
probe_ws() (
  local fd status line frame
  exec {fd}<>"/dev/tcp/127.0.0.1/$1" || exit 1
  printf 'GET / HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dmluY3VhLXByb2JlLWtleQ==\r\nSec-WebSocket-Version: 13\r\n\r\n' "$1" >&"$fd"
  IFS= read -r -t 2 -u "$fd" status || exit 1
  [[ $status == "HTTP/1.1 101 "* ]] || exit 1
  while IFS= read -r -t 2 -u "$fd" line; do
    [ "$line" = $'\r' ] && break
  done
  # One binary frame: 0x82, length 12, then "RFB 003.00x\n".
  IFS= read -r -t 2 -N 14 -u "$fd" frame || exit 1
  [[ ${frame:2} == "RFB 003."* ]]
)

# probe_cdp PORT: GET /json/version answers 200.
probe_cdp() (
  local fd status
  exec {fd}<>"/dev/tcp/127.0.0.1/$1" || exit 1
  printf 'GET /json/version HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n' "$1" >&"$fd"
  IFS= read -r -t 2 -u "$fd" status || exit 1
  [[ $status == "HTTP/1.1 200 "* ]]
)

# ---------------------------------------------------------------- parts

# start_bridge TARGET...: the WebSocket endpoint, relaying to TARGET (websockify's syntax:
# --unix-target=PATH for Xvnc's unix socket, or HOST:PORT for x11vnc).
start_bridge() {
  websockify_python
  if [ -n "$REPLY" ] && [ -r "$SELF_DIR/ws-bridge.py" ]; then
    spawn websockify "$REPLY" "$SELF_DIR/ws-bridge.py" "$bind:$ws_port" "$@"
  else
    spawn websockify "$WEBSOCKIFY" "$bind:$ws_port" "$@"
  fi
  ws_pid=$!
}

# -UseBlacklist=0: Xvnc otherwise refuses a host for 10 s after 5 connections that closed
# before authenticating, which readiness probes and reconnecting agents do all the time
# (everything behind websockify's unix socket counts as one host).
# Xvnc picks its display itself (-displayfd). It cannot pick its own RFB port (-rfbport 0
# means 5900+display), so we try random ports of the OS's ephemeral range: binding is the
# atomic check, and a collision ("Address already in use") retries with another port.
start_xvnc() {
  local attempt port lo hi deadline security=(-SecurityTypes None)
  read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
  if [ -n "$password" ]; then
    printf '%s\n' "$password" | vncpasswd -f >"$tmp/passwd" 2>>"$tmp/xvnc.log" ||
      fail DESKTOP_ERR_START_FAILED 5 "vncpasswd failed"
    chmod 600 "$tmp/passwd"
    security=(-SecurityTypes VncAuth -PasswordFile "$tmp/passwd")
  fi
  for attempt in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
    port=$rfb_port
    if [ "$port" = 0 ]; then port=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1))); fi
    : >"$tmp/display" >"$tmp/xvnc.log"
    spawn xvnc "$XVNC" -displayfd 3 3>"$tmp/display" -geometry "${width}x$height" -depth 24 \
      "${security[@]}" -interface 127.0.0.1 -rfbport "$port" -rfbunixpath "$tmp/rfb.sock" \
      -AlwaysShared -UseBlacklist=0 -nolisten tcp -desktop vncua
    xvnc_pid=$!
    while :; do
      IFS= read -r display 2>/dev/null <"$tmp/display" && [ -n "$display" ] && {
        rfb_listen_port=$port
        return 0
      }
      alive "$xvnc_pid" || break
      check_deadline
      snooze 0.005
    done
    wait "$xvnc_pid" 2>/dev/null || true
    if grep -q 'Address already in use' "$tmp/xvnc.log" && [ "$rfb_port" = 0 ]; then continue; fi
    log_tail xvnc
    fail DESKTOP_ERR_START_FAILED 5 "Xvnc did not start: $REPLY"
  done
  fail DESKTOP_ERR_START_FAILED 5 "Xvnc found no free RFB port after 16 tries"
}

# Xvfb picks its display itself (-displayfd).
start_xvfb() {
  : >"$tmp/display"
  spawn xvfb "$XVFB" -displayfd 3 3>"$tmp/display" -screen 0 "${width}x${height}x24" -nolisten tcp
  xvnc_pid=$!
  while :; do
    IFS= read -r display 2>/dev/null <"$tmp/display" && [ -n "$display" ] && return 0
    alive "$xvnc_pid" || { log_tail xvfb; fail DESKTOP_ERR_START_FAILED 5 "Xvfb did not start: $REPLY"; }
    check_deadline
    snooze 0.005
  done
}

# x11vnc probes for a free port itself from a random base in the ephemeral range (binding is
# the atomic check) and prints PORT=N once it listens.
start_x11vnc() {
  local lo hi base auth=(-nopw)
  read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
  base=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo - 200)))
  if [ -n "$password" ]; then
    printf '%s\n' "$password" | vncpasswd -f >"$tmp/passwd" 2>>"$tmp/x11vnc.log" ||
      fail DESKTOP_ERR_START_FAILED 5 "vncpasswd failed"
    chmod 600 "$tmp/passwd"
    auth=(-rfbauth "$tmp/passwd")
  fi
  [ "$rfb_port" = 0 ] || base=$rfb_port
  spawn x11vnc "$X11VNC" -display ":$display" -localhost -autoport "$base" -shared -forever \
    "${auth[@]}" -desktop vncua -norc -nossl -nocmds -noipv6 -quiet
  vnc_pid=$!
  while :; do
    if [ -s "$tmp/x11vnc.log" ]; then
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
  DISPLAY=":$display" spawn wm "$WM" -use_titlebar no -use_cursor yes
  wm_pid=$!
}

start_chromium() {
  # With another --bind, --cdp-port belongs to the forwarder; Chromium takes any port.
  local port=$cdp_port
  [ "$bind" = 127.0.0.1 ] || port=0
  # --app=about:blank opens Chromium's third-party new-tab page instead, which attaches over CDP
  # slowly (5 s, sometimes 30 s and more for Playwright's connectOverCDP): open an empty page.
  local app_url=$url
  [ "$url" = about:blank ] && app_url='data:text/html,'
  DISPLAY=":$display" spawn chromium "$CHROMIUM" --remote-debugging-port="$port" \
    --user-data-dir="$tmp/chromium" "${CHROMIUM_FLAGS[@]}" --app="$app_url"
  chromium_pid=$!
}

# CDP listens on 127.0.0.1 only; with another --bind, a forwarder publishes it.
start_cdp_forwarder() {
  websockify_python
  local py=${REPLY:-python3}
  spawn forward "$py" "$SELF_DIR/tcp-forward.py" "$bind" "$cdp_port" "$cdp_local_port"
  fwd_pid=$!
}

# check_parts PHASE: fail when a part has died.
check_parts() {
  local name pid
  for name in xvnc xvfb x11vnc wm websockify chromium forward; do
    case $name in
      xvnc) pid=$xvnc_pid; [ "$server" = xvnc ] || continue ;;
      xvfb) pid=$xvnc_pid; [ "$server" = x11vnc ] || continue ;;
      x11vnc) pid=$vnc_pid ;; wm) pid=$wm_pid ;; websockify) pid=$ws_pid ;;
      chromium) pid=$chromium_pid ;; forward) pid=$fwd_pid ;;
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

# Poll every 10 ms until the RFB greeting arrives through the WebSocket and CDP answers.
wait_ready() {
  local ws_ok="" cdp_ok=""
  while :; do
    check_parts start
    if [ -z "$ws_listen_port" ]; then
      listen_port "$ws_pid"
      ws_listen_port=$found_port
    fi
    if [ -z "$ws_ok" ] && [ -n "$ws_listen_port" ] && probe_ws "$ws_listen_port" 2>/dev/null; then ws_ok=1; fi
    if [ -z "$cdp_local_port" ] && [ -s "$tmp/chromium/DevToolsActivePort" ]; then
      IFS= read -r cdp_local_port <"$tmp/chromium/DevToolsActivePort" || true
      if [ "$bind" = 127.0.0.1 ]; then cdp_public_port=$cdp_local_port; elif [ -n "$cdp_local_port" ]; then start_cdp_forwarder; fi
    fi
    if [ -z "$cdp_public_port" ] && [ -n "$fwd_pid" ]; then
      listen_port "$fwd_pid"
      cdp_public_port=$found_port
    fi
    if [ -z "$cdp_ok" ] && [ -n "$cdp_public_port" ] && probe_cdp "$cdp_public_port" 2>/dev/null; then cdp_ok=1; fi
    [ -n "$ws_ok" ] && [ -n "$cdp_ok" ] && return 0
    check_deadline
    snooze 0.01
  done
}

print_ready() {
  local url_json tmp_json
  json_str "$url"
  url_json=$REPLY
  json_str "$tmp"
  tmp_json=$REPLY
  printf '{"vncUrl":"ws://127.0.0.1:%s","tcpUrl":"tcp://127.0.0.1:%s","cdpUrl":"http://127.0.0.1:%s","display":":%s","pid":%s,"rfbPort":%s,"wsPort":%s,"cdpPort":%s,"width":%s,"height":%s,"url":%s,"tmpDir":%s,"server":"%s"}\n' \
    "$ws_listen_port" "$rfb_listen_port" "$cdp_public_port" "$display" "$$" \
    "$rfb_listen_port" "$ws_listen_port" "$cdp_public_port" "$width" "$height" "$url_json" "$tmp_json" "$server"
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
# the group; then remove our X lock if Xvnc could not do it, and the temp dir.
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
  for arg in "$@"; do [ "$arg" = --json ] && json=1; done
  parse_args "$@"
  validate_args
  check_programs

  tmp=$(mktemp -d "${TMPDIR:-/tmp}/vncua-desktop.XXXXXX")
  trap cleanup EXIT
  trap 'exit 0' TERM INT HUP
  mkfifo "$tmp/sleep"
  exec {SLEEP_FD}<>"$tmp/sleep"
  now_ms
  deadline_ms=$((REPLY + timeout_s * 1000))

  if [ "$server" = x11vnc ]; then
    start_xvfb
    start_wm
    start_chromium
    start_x11vnc
    start_bridge "127.0.0.1:$rfb_listen_port"
  else
    start_bridge --unix-target="$tmp/rfb.sock" # connects to Xvnc's unix socket per client
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
