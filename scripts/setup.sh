#!/usr/bin/env bash
# Installs every Debian package fieldbrain needs. Idempotent; silent when all are present.
set -euo pipefail
# scripts/packages.sh's list, and debootstrap (scripts/test-stacks.sh makes its Debian 13 roots
# with it).
source "$(dirname "$0")/packages.sh"
PACKAGES=("${FIELDBRAIN_PACKAGES[@]}" debootstrap)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: ${#missing[@]} packages to install: ${missing[*]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "setup: apt-get update (~30 s)"
$SUDO apt-get update -qq
echo "setup: apt-get install (all of them on a fresh Debian 12: ~1.5 GB, 5-10 min depending on" \
     "the mirror; quiet until done)"
start=$SECONDS
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: installed in $(( SECONDS - start )) s"
