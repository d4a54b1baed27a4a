"""Scene overlays: settings by key path or parameter name, applied to a scene file before it is built."""
import numpy as np
import pytest

from cond_ros.cosim import ConfigError, build_scene, validate_config
from cond_ros.scenes import (Overlay, current_value, edited_scene, expand, format_key_path, load_named_scene,
                             read_overlay)
from cond_ros.scenes.overlay import parse_key_path
from cond_ros.scenes.registry import scene_file
from cond_ros.scenes.scene import read_scene_yaml
from cond_ros.sim import ModelError


@pytest.fixture(scope="module")
def cable_document():
    return read_scene_yaml(scene_file("panda_cable_small"))


def test_key_paths_parse_and_print():
    assert parse_key_path("cables[0].segment_damping.linear") == ("cables", 0, "segment_damping", "linear")
    assert parse_key_path("colliders[*].mu") == ("colliders", "*", "mu")
    assert format_key_path(("cables", 0, "segment_damping", "linear")) == "cables[0].segment_damping.linear"
    for bad in ("cables[0]..mu", "cables[x].mu", "1cables.mu", ""):
        with pytest.raises(ValueError, match="not a key path"):
            parse_key_path(bad)


def test_a_parameter_name_stands_for_every_key_the_file_sets(cable_document):
    """panda_cable_small.yaml sets mu on the robot, both colliders and the cable: the name ``mu`` is all four."""
    assert [format_key_path(p) for p in expand(cable_document, "mu")] == [
        "robots[0].mu", "colliders[0].mu", "colliders[1].mu", "cables[0].mu"]
    assert current_value(cable_document, "youngs_modulus") == 2.954e6
    assert current_value(cable_document, "segment_damping") == 0.01
    with pytest.raises(ValueError, match="did you mean youngs_modulus"):
        expand(cable_document, "youngs")
    with pytest.raises(ValueError, match="cables has 1 items"):
        expand(cable_document, "cables[3].mu")
    with pytest.raises(ValueError, match="did you mean segment_damping"):
        expand(cable_document, "cables[0].segmnt_damping.linear")


def test_an_overlay_builds_the_model_that_editing_the_file_builds():
    """The overlay's model is the one of the YAML edited by hand (an independent path: ``edited_scene``)."""
    def edit(data):
        data["cables"][0]["youngs_modulus"] = 4.0e6
        for section in ("robots", "colliders", "cables"):
            for item in data[section]:
                item["mu"] = 0.7
        data["cables"][0]["segment_damping"]["angular"] = 0.02
    by_hand = edited_scene("panda_cable_small", edit).simulator.model
    overlay = Overlay({"youngs_modulus": 4.0e6, "mu": 0.7, "cables[0].segment_damping.angular": 0.02}, "test")
    overlaid = load_named_scene("panda_cable_small", overlay=overlay).simulator.model
    plain = load_named_scene("panda_cable_small").simulator.model
    changed = 0
    for name, value in vars(by_hand).items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(getattr(overlaid, name), value, err_msg=name)
            changed += not np.array_equal(getattr(plain, name), value)
    assert changed >= 2  # the edits reached the model (stiffness, friction), so the comparison means something


def test_overlay_files_and_their_errors(tmp_path):
    good = tmp_path / "fitted.yaml"
    good.write_text(Overlay({"youngs_modulus": 3.5e6}, scene="panda_cable_small").to_yaml("from a test"))
    overlay = read_overlay(str(good))
    assert overlay.settings == {"youngs_modulus": 3.5e6} and overlay.scene == "panda_cable_small"
    assert good.read_text().startswith("# from a test\n")
    scene = build_scene(validate_config(dict(scene="panda_cable_small", overlay=str(good))), script=False)
    assert scene.cables[0].material.youngs_modulus == 3.5e6
    cases = {"sett: {mu: 1}\n": "sett: unknown key .* did you mean set",
             "set: {mu: fast}\n": r"set.mu: expected a finite number, got 'fast'",
             "set: {mu: .nan}\n": "set.mu: expected a finite number",
             "set: []\n": "set: expected a mapping",
             "set: {'cables[0]..mu': 1}\n": "not a key path",
             "set: {mu: [1\n": "invalid YAML"}
    for i, (text, message) in enumerate(cases.items()):
        path = tmp_path / f"bad{i}.yaml"
        path.write_text(text)
        with pytest.raises(ModelError, match=message):
            read_overlay(str(path))
    with pytest.raises(ModelError, match="cannot read"):
        read_overlay(str(tmp_path / "missing.yaml"))
    # a setting that does not fit the scene names the overlay, the scene file and the key
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("set:\n  cables[0].youngs_modulus: -1.0\n")
    with pytest.raises(ConfigError, match=r"wrong.yaml applied to .*panda_cable_small.yaml:\d+: "
                                          r"cables.0..youngs_modulus must be > 0"):
        build_scene(validate_config(dict(scene="panda_cable_small", overlay=str(wrong))))
    with pytest.raises(ConfigError, match="overlay: no such file"):
        validate_config(dict(scene="panda_cable_small", overlay=str(tmp_path / "missing.yaml")))
    with pytest.raises(ModelError, match="built in code"):
        load_named_scene("box_sliding", overlay=overlay)
