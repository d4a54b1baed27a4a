"""The viewer in a real headless browser (chromium through Selenium): the scene is there, a screenshot is not
blank, Pause stops sim time, Step advances it by exactly one step, and the command ends cleanly.

``test_readme_screenshots`` takes the README's pictures with the same code; with ``COND_ROS_SCREENSHOTS=1``
it writes them into ``docs/screenshots/`` (else into the test's temporary folder only).
"""
import os
import pathlib
import shutil
import time

import pytest
from viewer_page import ViewerPage, ViewerProcess, blank, browser_missing

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"no headless browser here: {MISSING}")

HERE = pathlib.Path(__file__).resolve().parent
SCENE = str(HERE / "data" / "viewer_scene.yaml")
SCREENSHOTS = HERE.parent.parent / "docs" / "screenshots"
DT = 0.01  # viewer_scene.yaml's
# Headless chromium draws with a software renderer: ~0.3 s a frame here, and every WebDriver command waits
# behind the frames (2-30 s while the scene moves). So the viewer draws 5 frames a second in a small window,
# and the 60 s scene runs at half real time: it is still running when the test has pressed its buttons.
INTERACTIVE = ["--fps", "5", "--real-time-factor", "0.5"]


def _viewed(tmp_path, args, name="view", **page_options):
    proc = ViewerProcess(args, tmp_path / f"{name}.log")
    page = None
    try:
        page = ViewerPage(proc.url(), **page_options)
    except BaseException:
        proc.stop()
        raise
    return proc, page


def _end(proc, page) -> tuple:
    if page is not None:
        page.close()
    code = proc.stop()
    return code, proc.log()


def test_pause_step_and_the_scene_in_a_real_browser(tmp_path):
    proc, page = _viewed(tmp_path, ["view", SCENE, "--port", "0", *INTERACTIVE], window=(1000, 700))
    try:
        text = page.wait_for(lambda t: "FEM soft_body0" in t and t, what="the scene's layers")
        for layer in ("robot gripper", "cable cable0", "FEM soft_body0", "colliders", "contact forces",
                      "cable cable0: 12 segments", "robot gripper: "):
            assert layer in text, f"{layer!r} is not on the page:\n{text}"
        page.wait_for(lambda t: page.status().get("step", 0) >= 20, what="20 steps")
        time.sleep(2.0)  # the software renderer draws the first frames slowly
        page.dismiss_notices()
        problem = blank(page.screenshot(tmp_path / "viewer.png"))
        assert problem is None, problem

        page.press("Pause")
        page.wait_for(lambda t: page.status().get("state") == "paused", what="state: paused")
        time.sleep(0.5)  # the viewer draws the last step within a frame (1/30 s)
        paused = page.status()
        time.sleep(1.5)
        assert page.status() == paused, "sim time moved while paused"

        page.press("Step")
        page.wait_for(lambda t: page.status()["step"] != paused["step"], what="the step")
        time.sleep(1.0)  # anything more than one step would show by now
        stepped = page.status()
        assert stepped["step"] == paused["step"] + 1
        assert stepped["sim time"] == pytest.approx(paused["sim time"] + DT, abs=1e-9)
        assert stepped["state"] == "paused"

        page.press("Play")
        page.wait_for(lambda t: page.status()["step"] >= stepped["step"] + 5, what="playing again")
        page.press("Reset")
        page.wait_for(lambda t: page.status()["sim time"] < stepped["sim time"], what="the reset")
    finally:
        code, log = _end(proc, page)
    assert code == 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    assert "stopped by SIGINT" in log, log[-3000:]


def _keep(shot: pathlib.Path, name: str) -> None:
    if os.environ.get("COND_ROS_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, SCREENSHOTS / name)


def _live_screenshot(tmp_path, scene: str, until_s: float, name: str) -> None:
    """Run ``scene`` as fast as possible with the viewer, pause at ``until_s`` of sim time, take the picture."""
    proc, page = _viewed(tmp_path, ["run", scene, "--view", "--port", "0", "--real-time-factor", "0", "--fps", "5",
                                    "--quiet"], name)
    try:
        page.wait_for(lambda t: page.status().get("sim time", 0.0) >= until_s, timeout=300,
                      what=f"{scene} at {until_s} s")
        page.press("Pause")
        page.wait_for(lambda t: page.status().get("state") == "paused", what="state: paused")
        time.sleep(2.0)
        page.dismiss_notices()
        shot = tmp_path / name
        problem = blank(page.screenshot(shot))
        assert problem is None, f"{name}: {problem}"
        _keep(shot, name)
    finally:
        code, log = _end(proc, page)
    assert code == 0 and "Traceback" not in log, log[-3000:]


def test_readme_screenshots(tmp_path):
    _live_screenshot(tmp_path, "panda_cable", 20.0, "panda_cable.png")
    _live_screenshot(tmp_path, "soft_gripper", 1.2, "soft_gripper.png")

    bag = tmp_path / "bag"
    recorder = ViewerProcess(["record", "panda_cable_small", "--out", str(bag), "--duration", "12", "--quiet"],
                             tmp_path / "record.log")
    assert recorder.proc.wait(timeout=300) == 0, recorder.log()[-3000:]
    recorder.stop()
    proc, page = _viewed(tmp_path, ["view", str(bag), "--scene", "panda_cable_small", "--port", "0",
                                    "--real-time-factor", "4", "--fps", "5"], "playback")
    try:
        page.wait_for(lambda t: page.status().get("recorded time", 0.0) >= 11.0, what="the playback's end")
        text = page.text()
        assert "F/T force, last 10 s" in text and "time [s]" in text, text
        time.sleep(2.0)
        page.dismiss_notices()
        shot = tmp_path / "playback.png"
        problem = blank(page.screenshot(shot))
        assert problem is None, problem
        _keep(shot, "bag_playback.png")
    finally:
        code, log = _end(proc, page)
    assert code == 0 and "Traceback" not in log, log[-3000:]
