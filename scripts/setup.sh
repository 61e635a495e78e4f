#!/usr/bin/env bash
# Installs what Warden needs on a fresh Debian machine; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
[ -x /usr/lib/postgresql/15/bin/postgres ] || need_apt+=(postgresql-15)
command -v etcd >/dev/null 2>&1 || need_apt+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || need_apt+=(etcd-client)
command -v wrk >/dev/null 2>&1 || need_apt+=(wrk)
# Exporter tests and benchmark: promtool (metric lint), postgres_exporter (side by side), pgbouncer.
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
command -v prometheus-postgres-exporter >/dev/null 2>&1 || need_apt+=(prometheus-postgres-exporter)
[ -x /usr/sbin/pgbouncer ] || need_apt+=(pgbouncer)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  # Server packages (prometheus, postgres_exporter, pgbouncer) would start a system service on
  # their default port: a policy-rc.d that refuses every start, only for this install, keeps them off.
  added_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null && $SUDO chmod +x /usr/sbin/policy-rc.d && added_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  [ -z "$added_policy" ] || $SUDO rm -f /usr/sbin/policy-rc.d
  # With systemd, units are enabled and started by deb-systemd-invoke regardless: stop and disable them.
  if [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now prometheus.service prometheus-postgres-exporter.service pgbouncer.service >/dev/null 2>&1 || true
  fi
fi
# PostgreSQL refuses to run as root: the tests and the demo run it as this user.
if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  useradd --system --home /var/lib/postgresql --shell /bin/bash postgres
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
echo "setup: ok"
