#!/usr/bin/env bash
# Installs what Warden needs on a fresh Debian machine; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# PIDs of processes named $1 (from /proc: pgrep is not on every minimal machine).
pids_of() {
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"
  done
  return 0
}

need_apt=()
[ -x /usr/lib/postgresql/15/bin/postgres ] || need_apt+=(postgresql-15)
command -v etcd >/dev/null 2>&1 || need_apt+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || need_apt+=(etcd-client)
# Load generators of bench:agent-api: h2load on keep-alive connections, wrk for a server that
# closes each connection (Patroni's API).
command -v h2load >/dev/null 2>&1 || need_apt+=(nghttp2-client)
command -v wrk >/dev/null 2>&1 || need_apt+=(wrk)
# promtool checks the shipped alert rules and the exporter's metrics; postgres_exporter runs
# beside the exporter in its benchmark; pgbouncer is a target of the exporter's tests.
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
command -v prometheus-postgres-exporter >/dev/null 2>&1 || need_apt+=(prometheus-postgres-exporter)
[ -x /usr/sbin/pgbouncer ] || need_apt+=(pgbouncer)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
# The etcd tests also run against Debian 13's etcd (3.5): `npm test` fetches it from the Debian
# archive with scripts/fetch-etcd.sh (unpacked under .cache/, not installed).
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
command -v gpgv >/dev/null 2>&1 || need_apt+=(gpgv)
# The chaos suite builds its own network namespaces and cuts links with iptables.
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
command -v iptables >/dev/null 2>&1 || need_apt+=(iptables)
# A read-only data disk is an ext4 image on a loop device (mkfs.ext4, e2fsck; findmnt, losetup).
command -v mkfs.ext4 >/dev/null 2>&1 || need_apt+=(e2fsprogs)
command -v findmnt >/dev/null 2>&1 || need_apt+=(util-linux)
command -v losetup >/dev/null 2>&1 || need_apt+=(mount)
# The status page is tested in a real browser (headless, driven by playwright-core).
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
# Routing is tested through a real HAProxy with the handbook's example.
[ -x /usr/sbin/haproxy ] || need_apt+=(haproxy)
# The benchmarks compare with peers when those are installed: `scripts/setup.sh --bench` adds
# Patroni with its Python dependencies (bench:switchover --system patroni, bench:agent-api,
# bench:dcs), and perf for bench:switchover-cpu --trace-loop. The tests need neither.
if [ "${1:-}" = "--bench" ]; then
  [ -x /usr/bin/patroni ] || need_apt+=(patroni python3-etcd python3-psycopg2)
  command -v perf >/dev/null || need_apt+=(linux-perf)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  # Packages must not leave servers running (prometheus would listen on :9090, pgbouncer on
  # :6432, postgres_exporter on :9187): policy-rc.d
  # tells Debian's maintainer scripts not to start services, unless the machine already has one.
  own_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod 755 /usr/sbin/policy-rc.d
    own_policy=1
  fi
  # Server programs a package may start (comm names are cut at 15 characters).
  servers="prometheus pgbouncer prometheus-post haproxy patroni"
  before=$(for n in $servers; do pids_of "$n"; done)
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  [ -z "$own_policy" ] || $SUDO rm -f /usr/sbin/policy-rc.d
  # Whatever started anyway is stopped by PID (only processes that were not running before).
  for pid in $(for n in $servers; do pids_of "$n"; done); do
    case " $(echo $before) " in *" $pid "*) ;; *) echo "setup: stopping a server a package started (PID $pid)"; $SUDO kill "$pid" || true ;; esac
  done
  # With systemd, units are enabled and started by deb-systemd-invoke regardless: stop and disable them.
  if [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now prometheus.service prometheus-postgres-exporter.service pgbouncer.service haproxy.service patroni.service >/dev/null 2>&1 || true
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
