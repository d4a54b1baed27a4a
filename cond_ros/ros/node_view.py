"""The node's browser 3D view (parameter ``view``): the viewer's buttons run the node's own pause, step and
reset, on the node's thread.

The viewer calls from its own thread; the node's state belongs to the node's loop. So a button posts its
request and waits (at most :data:`ANSWER_TIMEOUT_S`) for the loop to run it between two steps
(:meth:`NodeViewer.serve`) and answer, as a service call would be answered.
"""
from __future__ import annotations

import queue
import threading

from ..view import LiveView

ANSWER_TIMEOUT_S = 2.0


class _Done:
    """The token a step request completes (the viewer does not wait for the step itself)."""

    def set_result(self, result) -> None:
        pass


class NodeViewer:
    """A :class:`~cond_ros.view.LiveView` of ``node``'s scene whose controls are the node's services."""

    def __init__(self, node):
        self.node = node
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        config = node.config
        self.live = LiveView(node.scene, self, host=config.view_host, port=config.view_port, title="cond_sim")
        self.url = self.live.url

    # -- the viewer's side (its thread) ----------------------------------------------------------------

    @property
    def paused(self) -> bool:
        return self.node.requests.paused

    @property
    def real_time_factor(self) -> float:
        return self.node.pacer.real_time_factor

    def _ask(self, action: str, value=None) -> str:
        answer: list = []
        done = threading.Event()
        self._requests.put((action, value, answer, done))
        if not done.wait(ANSWER_TIMEOUT_S):
            return f"{action}: asked; the node has not answered within {ANSWER_TIMEOUT_S:g} s (it is mid-step)"
        return answer[0]

    def play(self) -> str:
        return self._ask("play")

    def pause(self) -> str:
        return self._ask("pause")

    def step(self) -> str:
        return self._ask("step")

    def reset(self) -> str:
        return self._ask("reset")

    def set_real_time_factor(self, value: float) -> str:
        return self._ask("real_time_factor", value)

    # -- the node's side (its loop) --------------------------------------------------------------------

    def serve(self) -> None:
        """Run the requests the viewer has posted (call between steps, on the node's thread)."""
        while True:
            try:
                action, value, answer, done = self._requests.get_nowait()
            except queue.Empty:
                return
            answer.append(self._run(action, value))
            done.set()

    def _run(self, action: str, value) -> str:
        node = self.node
        if action in ("play", "pause"):
            return node.pause(action == "pause")[1]
        if action == "reset":
            return node.reset()[1]
        if action == "step":
            if not node.requests.paused:
                return "the simulation is running; pause it first"
            node.requests.request(node.steps_per_trigger, _Done())
            return f"{node.steps_per_trigger} step{'s' if node.steps_per_trigger > 1 else ''}"
        from rclpy.parameter import Parameter
        result = node.set_parameters([Parameter("real_time_factor", value=float(value))])[0]
        return f"real-time factor {value:g}" if result.successful else f"real-time factor: {result.reason}"

    def stepped(self, stats) -> None:
        """After each step: the viewer's next frame may draw it."""
        node = self.node
        self.live.latest.set(node.clock.steps, node.sim.state, node.sim.contacts, stats, node.pacer.achieved())

    def close(self) -> None:
        self.live.close()
