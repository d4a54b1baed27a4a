"""A viewer command in its own process group and its page in a real headless browser (Debian's chromium,
driven by Selenium through chromium-driver): what the browser test and the README's screenshots share.

The browser is the system's: ``.ci/browser`` installs ``chromium`` and ``chromium-driver`` with apt where
they are missing. :func:`browser_missing` says why a browser cannot run here (the tests skip with it).
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

CHROMIUM = ("chromium", "chromium-browser")
DRIVER = "chromedriver"
WINDOW = (1400, 900)  # the README's screenshots
START_TIMEOUT_S = 240  # the kernels of a scene may compile on the first run (about a minute here)
URL = re.compile(r"viewer: (http://\S+)")


def _which(names) -> str | None:
    return next((path for path in map(shutil.which, names) if path), None)


def browser_missing() -> str | None:
    """Why no browser test can run here, or None."""
    missing = [what for what, found in (("chromium", _which(CHROMIUM)), ("chromium-driver", _which([DRIVER])))
               if not found]
    if missing:
        return f"{' and '.join(missing)} not installed (apt-get install chromium chromium-driver; .ci/browser does it)"
    try:
        import selenium  # noqa: F401
    except ImportError as exc:
        return f"selenium is not installed ({exc}); pip install -e '.[test]'"
    try:
        import viser  # noqa: F401
    except ImportError as exc:
        return f"viser is not installed ({exc}); pip install -e '.[view]'"
    return None


def printed_url(log, alive, timeout: float = START_TIMEOUT_S) -> str:
    """The viewer URL that a process printed (``log()``: its output so far), once it did; an AssertionError
    with the output when it ends first (``alive()`` false) or after ``timeout`` s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if match := URL.search(log()):
            return match.group(1)
        if not alive():
            raise AssertionError(f"the viewer's process ended:\n{log()[-3000:]}")
        time.sleep(0.2)
    raise AssertionError(f"no viewer URL within {timeout} s:\n{log()[-3000:]}")


class ViewerProcess:
    """``cond-ros ARGS`` (a viewer command) in its own process group; its output in ``log_path``."""

    def __init__(self, args, log_path, timeout: float = 600.0):
        self.log_path = str(log_path)
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen([sys.executable, "-m", "cond_ros.cli", *args], stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True,
                                     env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self._watchdog = threading.Timer(timeout, lambda: self._signal(signal.SIGKILL))
        self._watchdog.daemon = True
        self._watchdog.start()

    def log(self) -> str:
        with open(self.log_path) as fh:
            return fh.read()

    def url(self, timeout: float = START_TIMEOUT_S) -> str:
        """The URL the command printed, once it did."""
        return printed_url(self.log, lambda: self.proc.poll() is None, timeout)

    def _signal(self, sig) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)

    def stop(self, grace: float = 10.0) -> int:
        """Ctrl-C (SIGINT) to the group, SIGKILL after ``grace`` s; the exit code (None if it had to be killed)."""
        self._watchdog.cancel()
        code = self.proc.poll()
        if code is None:
            self._signal(signal.SIGINT)
            try:
                code = self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                code = None
        self._signal(signal.SIGKILL)  # anything left in the group
        self.proc.wait()
        self._log.close()
        return code


class ViewerPage:
    """The viewer's page in headless chromium."""

    def __init__(self, url: str, window=WINDOW):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        options.binary_location = _which(CHROMIUM)
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--use-gl=swiftshader",
                    "--enable-unsafe-swiftshader", f"--window-size={window[0]},{window[1]}"):
            options.add_argument(arg)
        self.driver = webdriver.Chrome(service=Service(_which([DRIVER])), options=options)
        self.driver.set_page_load_timeout(60)
        self.driver.get(url)

    def text(self) -> str:
        return self.driver.find_element("tag name", "body").text

    def wait_for(self, predicate, timeout: float = 120.0, what: str = "the page"):
        """Poll ``predicate(page text)`` until it returns something true; returns that."""
        end = time.monotonic() + timeout
        text = ""
        while time.monotonic() < end:
            with contextlib.suppress(Exception):  # the page may be mid-render
                text = self.text()
                if result := predicate(text):
                    return result
            time.sleep(0.1)
        raise AssertionError(f"{what}: not seen within {timeout} s; the page says:\n{text[-3000:]}")

    def status(self) -> dict:
        """The status lines (``sim time: 1.230000 s``, ``step: 123``, ...) as numbers or words."""
        out = {}
        for key, value in re.findall(r"^(sim time|recorded time|step|sample|state): (\S+)", self.text(), re.M):
            out[key] = value if key == "state" else float(value)
        return out

    def press(self, label: str) -> None:
        self.driver.find_element("xpath", f"//button[normalize-space()='{label}']").click()

    def dismiss_notices(self) -> None:
        """Close the 'software WebGL' notice that headless chromium's software renderer brings up."""
        for button in self.driver.find_elements("css selector", "button.mantine-Notification-closeButton, "
                                                                "button[class*='Notification'][class*='close']"):
            with contextlib.suppress(Exception):
                button.click()
        time.sleep(1.0)  # its fade-out
    def screenshot(self, path) -> bytes:
        png = self.driver.get_screenshot_as_png()
        with open(path, "wb") as fh:
            fh.write(png)
        return png

    def close(self) -> None:
        self.driver.quit()


def blank(png: bytes) -> str | None:
    """Why a screenshot is blank (one colour, or hardly any), else None: the 3D view's part is checked, left of
    the panel."""
    import io

    import numpy as np
    from PIL import Image
    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    view = image[:, : int(0.65 * image.shape[1])]
    colours = len(np.unique(view.reshape(-1, 3), axis=0))
    spread = float(view.std())
    if colours < 50 or spread < 5.0:
        return f"the 3D view has {colours} colours and a pixel spread of {spread:.1f}: blank"
    return None
