"""The browser side of the dashboard test: a headless Chromium driven by selenium through
Debian's chromedriver, and the real `grantmatch serve` process it talks to.

Chromium and ChromeDriver come from the Debian packages `chromium` and `chromium-driver`
(`scripts/browser-setup.sh`, run by `make test`); selenium never downloads a driver here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import pytest

from conftest import REPO, clean_env, free_port, json_request, stop_server

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
STARTUP_SECONDS = 120
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--lang=en-US",
    "--window-size=1000,900",
]


def screenshot_dir() -> Path:
    """`GRANTMATCH_SCREENSHOTS`, else `<target>/dashboard-screenshots`."""
    d = os.environ.get("GRANTMATCH_SCREENSHOTS")
    if not d:
        target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
        d = str(target / "dashboard-screenshots")
    path = Path(d)
    path.mkdir(parents=True, exist_ok=True)
    return path


class Service:
    """A `grantmatch serve` process on a fresh data directory, and its CLI."""

    def __init__(self, binary: str, data: Path, model_dir: str):
        self.binary = binary
        self.data = data
        self.model_dir = model_dir
        self.base = ""
        self.proc: Optional[subprocess.Popen] = None

    def env(self) -> Dict[str, str]:
        return clean_env(
            GRANTMATCH_MODEL_DIR=self.model_dir,
            GRANTMATCH_NO_RATE_LIMITS="true",
            # Starter: 10,000 matchings a year; a share of 0.001 leaves 10 a quarter,
            # so nine requests reach the 90 % notice.
            GRANTMATCH_QUOTA_QUARTER_SHARE="0.001",
        )

    def cli(self, *args: str) -> str:
        out = subprocess.run(
            [self.binary, "--data-dir", str(self.data), *args],
            env=self.env(),
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return out.stdout.strip()

    def start(self) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.log = open(self.data / "server.log", "wb")
        self.proc = subprocess.Popen(
            [self.binary, "--data-dir", str(self.data), "serve", "--addr", f"127.0.0.1:{port}"],
            env=self.env(),
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"the server exited: {self.server_log()}")
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("the server did not start")
            time.sleep(0.2)

    def server_log(self) -> str:
        return (self.data / "server.log").read_text(errors="replace")

    def stop(self) -> None:
        if self.proc is not None:
            stop_server(self.proc, self.log)

    def api(
        self, method: str, path: str, token: str, body: Optional[Any] = None
    ) -> Tuple[int, Any]:
        return json_request(self.base, method, path, token, body)

    def match(self, token: str, body: Dict[str, Any]) -> Tuple[int, Any]:
        """POST /matching, waiting while the model is still loading (503)."""
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            status, answer = self.api("POST", "/api/v1/matching", token, body)
            if status != 503 or time.monotonic() > deadline:
                return status, answer
            time.sleep(0.5)

    def form_post(self, path: str, cookie: str, fields: Dict[str, str]) -> Tuple[int, str]:
        """A form post outside the browser (with the browser's session cookie)."""
        req = urllib.request.Request(
            self.base + path,
            data=urllib.parse.urlencode(fields).encode(),
            method="POST",
        )
        req.add_header("Cookie", cookie)
        req.add_header("Content-Type", "application/x-www-form-urlencoded")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()


def chromium():
    """A headless Chromium with a fresh profile, or a failure naming the setup step."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            pytest.fail(
                f"{path} is missing: run scripts/browser-setup.sh "
                "(apt-get install -y chromium chromium-driver)",
                pytrace=False,
            )
    profile = tempfile.mkdtemp(prefix="grantmatch-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=DriverService(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(30)
    return driver, profile


def close(driver, profile: str) -> None:
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)
