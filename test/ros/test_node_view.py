"""The node's browser view (parameter ``view``) in a real headless browser: its buttons are the node's own
pause, step and reset, run on the node's thread (cond_ros/ros/node_view.py)."""
import time

import pytest
from ros_harness import ros_session, start_sim
from viewer_page import ViewerPage, blank, browser_missing, printed_url

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"no headless browser here: {MISSING}")
DT = 0.01  # panda_cable_small's


def test_the_node_view_steps_pauses_and_resets_the_node(tmp_path):
    with ros_session():
        process = start_sim(tmp_path, view=True, view_port=0, start_paused=True, real_time_factor=0.5)
        page = None
        try:
            page = ViewerPage(printed_url(process.log, process.alive), window=(1000, 700))
            text = page.wait_for(lambda t: "cable cable0" in t and t, what="the scene")
            assert "robot panda: 14 links" in text and "F/T wrist_ft" in text, text
            start = page.wait_for(lambda t: (s := page.status()).get("state") == "paused" and s, what="paused")

            page.press("Step")
            page.wait_for(lambda t: page.status()["step"] == start["step"] + 1, what="one step")
            time.sleep(1.0)
            stepped = page.status()
            assert stepped["step"] == start["step"] + 1
            assert stepped["sim time"] == pytest.approx(start["sim time"] + DT, abs=1e-9)

            page.press("Play")
            page.wait_for(lambda t: page.status()["step"] >= stepped["step"] + 10, what="playing")
            page.press("Pause")
            page.wait_for(lambda t: page.status()["state"] == "paused", what="paused again")
            time.sleep(0.5)
            paused = page.status()
            time.sleep(1.5)
            assert page.status() == paused, "the node stepped while paused"
            problem = blank(page.screenshot(tmp_path / "node_view.png"))
            assert problem is None, problem

            page.press("Reset")
            page.wait_for(lambda t: "reset the state" in t, what="the node's reset answer")
        finally:
            if page is not None:
                page.close()
            code = process.stop()
    log = process.log()
    assert code == 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
