#!/usr/bin/env bash
# Puts a nats-server with JetStream into $BROKKR_CACHE/bin. Debian's 2.9.10 package is enough for
# what we use (streams, msgID de-duplication, durable pull consumers); it is unpacked with
# dpkg-deb rather than installed, so no system service is started. If apt is unavailable we
# build a pinned release from the Go module proxy.
set -euo pipefail
cache="${BROKKR_CACHE:-$HOME/.cache/brokkr}"
bin="$cache/bin"
mkdir -p "$bin"
[ -x "$bin/nats-server" ] && exit 0
NATS_VERSION="${BROKKR_NATS_VERSION:-v2.10.29}"
if command -v apt-get >/dev/null 2>&1; then
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  echo "[brokkr] fetching Debian nats-server into $bin" >&2
  if (cd "$work" && apt-get download nats-server >&2 2>/dev/null) || \
     { (apt-get update -q >&2 || true) && (cd "$work" && apt-get download nats-server >&2); }; then
    dpkg-deb -x "$work"/nats-server_*.deb "$work/x"
    cp "$work/x/usr/sbin/nats-server" "$bin/nats-server"
    exit 0
  fi
fi
if command -v go >/dev/null 2>&1; then
  echo "[brokkr] building nats-server $NATS_VERSION with go install" >&2
  GOBIN="$bin" GOTOOLCHAIN=local go install "github.com/nats-io/nats-server/v2@$NATS_VERSION" >&2
  exit 0
fi
echo "nats-server not found: install it (apt-get install nats-server) or set BROKKR__NATS__URL" >&2
exit 1
