#!/usr/bin/env bash
# Builds the base image docker/Dockerfile starts FROM (debian:bookworm-slim) out of Debian's
# packages alone, for machines that cannot pull from a registry (air-gapped, or only a Debian
# mirror reachable): debootstrap --variant=minbase, trimmed as the official slim image is (no
# docs, man pages or locales; apt keeps no package lists or .debs), then `docker import`.
#
#   docker/base-image.sh [--tag debian:bookworm-slim] [--mirror URL]
#   (or VNCUA_DEBIAN_MIRROR / VNCUA_DEBIAN_SECURITY_MIRROR)
#
# Needs root (debootstrap) and the debootstrap package. The image carries the label
# vncua.base=debootstrap, so it is never mistaken for the official one. Prints the image id.
# Exit codes: 0 built, 1 failed (the message says which step), 2 bad arguments.
set -euo pipefail

tag=debian:bookworm-slim
suite=bookworm
mirror=${VNCUA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${VNCUA_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

while [ $# -gt 0 ]; do
  case $1 in
    --tag) tag=${2:?--tag needs a value}; shift 2 ;;
    --mirror) mirror=${2:?--mirror needs a value}; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "base-image.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "base-image.sh: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "debootstrap needs root: run as root (or with sudo)"
command -v debootstrap >/dev/null || die "debootstrap is not installed: apt-get install debootstrap"
command -v docker >/dev/null || die "the docker CLI is not installed: apt-get install docker.io"

root=$(mktemp -d "${TMPDIR:-/tmp}/vncua-rootfs.XXXXXX")
cleanup() { rm -rf --one-file-system -- "$root" 2>/dev/null || true; }
trap cleanup EXIT

say "debootstrap --variant=minbase $suite from $mirror (log: $root.log)"
if ! debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.log" 2>&1; then
  tail -n 5 "$root.log" >&2
  die "debootstrap failed (full log: $root.log); check that $mirror is reachable (--mirror URL)"
fi

# What the official slim image configures: dpkg skips docs, man pages and locales from now on,
# and apt drops its .debs after each install.
mkdir -p "$root/etc/dpkg/dpkg.cfg.d" "$root/etc/apt/apt.conf.d"
cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
printf 'Acquire::Languages "none";\n' >"$root/etc/apt/apt.conf.d/docker-no-languages"
# The same mirror inside, with updates and security (debootstrap wrote only the main suite):
# Chromium comes from bookworm-security, the version the host's own apt installs.
printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' "$mirror" "$suite" "$mirror" "$suite" "$security" "$suite" >"$root/etc/apt/sources.list"
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/var/log/*.log "$root"/tmp/*

say "importing as $tag"
tar --numeric-owner -C "$root" -c . |
  docker import --change 'CMD ["bash"]' --change 'LABEL vncua.base=debootstrap' --message "vncua: debootstrap --variant=minbase $suite" - "$tag" >/dev/null ||
  die "docker import failed (is the daemon running? docker version)"
docker image inspect --format '{{.Id}}' "$tag"
