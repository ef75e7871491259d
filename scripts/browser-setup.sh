#!/usr/bin/env bash
# Chromium and ChromeDriver for the dashboard's browser test (python/tests/test_dashboard_browser.py),
# from Debian's packages `chromium` and `chromium-driver` (/usr/bin/chromium, /usr/bin/chromedriver).
# Installs them only when missing; called by `make test` before the Python suite.
set -euo pipefail

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "error: the browser test needs /usr/bin/chromium and /usr/bin/chromedriver;" \
        "install them as root: apt-get install -y chromium chromium-driver" >&2
    exit 1
fi
echo "==> installing chromium and chromium-driver (Debian packages)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium chromium-driver >/dev/null
/usr/bin/chromium --version
/usr/bin/chromedriver --version
