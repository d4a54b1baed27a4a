"""The standard ``simulation_interfaces`` services, served when that package is importable.

There is no PyPI wheel of simulation_interfaces, so on the pip install path this module serves nothing
and the std_srvs services of the node (``~/pause``, ``~/step``, ``~/reset``) are the interface. Each
service here calls the same node methods as those (``pause``, ``run_steps``, ``reset``).
"""
from __future__ import annotations

try:
    from simulation_interfaces.msg import Result, SimulationState
    from simulation_interfaces.srv import (GetSimulationState, ResetSimulation, SetSimulationState,
                                           StepSimulation)
except ImportError:
    Result = None


def _fill(response, ok: bool, message: str, failure_code=None):
    """Set the outcome in either form the package has had: ``result`` (Result) or success/status_message."""
    if hasattr(response, "result"):
        failure = Result.OPERATION_FAILED if failure_code is None else failure_code  # FEATURE_UNSUPPORTED is 0
        response.result.result = Result.OK if ok else failure
        response.result.error_message = "" if ok else message
    else:
        response.success, response.status_message = ok, message
    return response


def create_simulation_interfaces(node) -> list:
    """Serve ``~/step_simulation``, ``~/reset_simulation``, ``~/set_simulation_state`` and
    ``~/get_simulation_state`` on ``node`` (a SimNode); returns the services (none without the package)."""
    if Result is None:
        return []

    async def step(request, response):
        ok, message = await node.run_steps(int(request.steps))
        return _fill(response, ok, message, Result.INCORRECT_STATE)

    def reset(request, response):
        return _fill(response, *node.reset())

    def set_state(request, response):
        target = request.state.state
        if target == SimulationState.QUITTING:
            return _fill(response, False, "quitting is not offered; stop the node instead", Result.FEATURE_UNSUPPORTED)
        if target == SimulationState.STOPPED:
            node.pause(True)
            return _fill(response, *node.reset())
        return _fill(response, *node.pause(target == SimulationState.PAUSED))

    def get_state(request, response):
        response.state.state = SimulationState.PAUSED if node.requests.paused else SimulationState.PLAYING
        return _fill(response, True, "")

    return [node.create_service(StepSimulation, "~/step_simulation", step),
            node.create_service(ResetSimulation, "~/reset_simulation", reset),
            node.create_service(SetSimulationState, "~/set_simulation_state", set_state),
            node.create_service(GetSimulationState, "~/get_simulation_state", get_state)]
