"""The simulation_interfaces services (no wheel here): with stand-in message modules, each service calls
the node's pause / step / reset and reports in the package's Result form."""
import asyncio
import importlib
import sys
import types

import pytest


class _Result:
    FEATURE_UNSUPPORTED, OK, NOT_FOUND, INCORRECT_STATE, OPERATION_FAILED = range(5)

    def __init__(self):
        self.result, self.error_message = None, None


class _State:
    STOPPED, PLAYING, PAUSED, QUITTING = range(4)

    def __init__(self, state=0):
        self.state = state


def _response():
    return types.SimpleNamespace(result=_Result(), state=_State())


class _Node:
    def __init__(self):
        self.calls, self.services = [], {}
        self.requests = types.SimpleNamespace(paused=True)

    def create_service(self, kind, name, callback):
        self.services[name] = callback
        return name

    def pause(self, paused):
        self.calls.append(("pause", paused))
        self.requests.paused = paused
        return True, "ok"

    def reset(self):
        self.calls.append(("reset",))
        return True, "reset"

    async def run_steps(self, steps):
        self.calls.append(("step", steps))
        return (False, "running") if not self.requests.paused else (True, "done")


@pytest.fixture
def services(monkeypatch):
    msg = types.SimpleNamespace(Result=_Result, SimulationState=_State)
    srv = types.SimpleNamespace(GetSimulationState=1, ResetSimulation=2, SetSimulationState=3, StepSimulation=4)
    monkeypatch.setitem(sys.modules, "simulation_interfaces", types.SimpleNamespace(msg=msg, srv=srv))
    monkeypatch.setitem(sys.modules, "simulation_interfaces.msg", msg)
    monkeypatch.setitem(sys.modules, "simulation_interfaces.srv", srv)
    import cond_ros.ros.sim_services as module
    module = importlib.reload(module)
    node = _Node()
    assert len(module.create_simulation_interfaces(node)) == 4
    yield node
    monkeypatch.undo()
    importlib.reload(module)


def test_step_reset_and_states(services):
    """Step N, reset, play/pause/stop and the state query map onto the node's methods."""
    node = services
    response = asyncio.run(node.services["~/step_simulation"](types.SimpleNamespace(steps=7), _response()))
    assert response.result.result == _Result.OK and node.calls[-1] == ("step", 7)
    node.services["~/set_simulation_state"](types.SimpleNamespace(state=_State(_State.PLAYING)), _response())
    assert node.calls[-1] == ("pause", False)
    response = asyncio.run(node.services["~/step_simulation"](types.SimpleNamespace(steps=1), _response()))
    assert response.result.result == _Result.INCORRECT_STATE and response.result.error_message == "running"
    assert node.services["~/get_simulation_state"](None, _response()).state.state == _State.PLAYING
    node.services["~/set_simulation_state"](types.SimpleNamespace(state=_State(_State.STOPPED)), _response())
    assert node.calls[-2:] == [("pause", True), ("reset",)]
    response = node.services["~/set_simulation_state"](types.SimpleNamespace(state=_State(_State.QUITTING)),
                                                       _response())
    assert response.result.result == _Result.FEATURE_UNSUPPORTED
    assert node.services["~/reset_simulation"](None, _response()).result.result == _Result.OK


def test_absent_package_serves_nothing():
    """Without simulation_interfaces (as on pip) no service is created."""
    from cond_ros.ros.sim_services import Result, create_simulation_interfaces
    if Result is not None:
        pytest.skip("simulation_interfaces is installed")
    assert create_simulation_interfaces(_Node()) == []
