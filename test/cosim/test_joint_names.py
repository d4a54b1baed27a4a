"""Joint names: panda_ and fer_ prefixes name the same joints; mimic joints are accepted and dropped."""
import numpy as np
import pytest

from cond_ros.cosim.joint_names import JointNameMap, UnknownJointError, model_joint_names
from cond_ros.scenes.registry import load_named_scene

DOFS = [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1"]


def test_both_prefixes_resolve():
    """fer_joint3 and panda_joint3 are DOF 2."""
    names = JointNameMap(DOFS, ["panda_finger_joint2"])
    assert names.dof("panda_joint3") == 2 and names.dof("fer_joint3") == 2
    assert names.dof("fer_finger_joint1") == 7


def test_mimic_joints_are_dropped():
    """A mimic joint follows its leader: its entry is skipped, the others keep their positions."""
    names = JointNameMap(DOFS, ["panda_finger_joint2"])
    dofs, kept = names.dofs(["fer_joint1", "panda_finger_joint2", "panda_joint2"])
    np.testing.assert_array_equal(dofs, [0, 1])
    np.testing.assert_array_equal(kept, [0, 2])


def test_unknown_and_repeated_names():
    """Unknown names list the known ones; one joint named twice (even with two prefixes) is an error."""
    names = JointNameMap(DOFS)
    with pytest.raises(UnknownJointError, match="panda_joint1"):
        names.dof("joint1")
    with pytest.raises(ValueError, match="twice"):
        names.dofs(["panda_joint1", "fer_joint1"])


def test_model_names_include_mimic_joints():
    """The Panda model has 8 DOFs and the mimic finger joint."""
    model = load_named_scene("panda_pick").simulator.model
    dof_names, mimic = model_joint_names(model)
    assert dof_names == DOFS
    assert mimic == ["panda_finger_joint2"]
