"""The one resolver of the package's data files, in each install layout, built here from real files."""
import os
import sys

import pytest

from cond_ros import resources

PACKAGE_XML = "<package format=\"3\"><name>cond_ros</name></package>"
SITE = os.path.join("lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """Point the resolver at a package directory under ``tmp_path`` (``tmp_path/<relative>/cond_ros``)."""
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    monkeypatch.setattr(resources, "_distribution_share_dirs", lambda: [])
    monkeypatch.setattr(resources.sys, "prefix", str(tmp_path / "no_prefix"))
    monkeypatch.setattr(resources.site, "getuserbase", lambda: str(tmp_path / "no_user_base"))

    def place(package_parent):
        package = tmp_path / package_parent / "cond_ros"
        package.mkdir(parents=True)
        monkeypatch.setattr(resources, "PACKAGE_DIR", str(package))
        resources.share_dir.cache_clear()
        return package
    yield place
    resources.share_dir.cache_clear()


def share(root, name="cond_ros"):
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.xml").write_text(PACKAGE_XML.replace("cond_ros", name))
    (root / "config").mkdir()
    (root / "config" / "demo.yaml").write_text("dt: 0.01\n")
    return root


def test_the_checkout_has_the_scenes():
    """Here (a checkout, editable install): the directory above the package, with every packaged scene."""
    assert resources.share_dir() == os.path.dirname(resources.PACKAGE_DIR)
    assert {"panda_cable", "panda_cable_small", "soft_ball"} <= set(resources.scene_files())
    assert os.path.isfile(resources.packaged_file("urdf/panda.urdf"))


def test_source_checkout_first(tmp_path, layout):
    """A package directory whose parent holds our package.xml is a checkout: its files win."""
    layout("checkout")
    share(tmp_path / "checkout")
    share(tmp_path / "share" / "cond_ros")
    assert resources.share_dir() == str(tmp_path / "checkout")


def test_prefix_share_of_pip_and_colcon(tmp_path, layout):
    """pip (venv, --user, wheel) and colcon put the data in <prefix>/share/cond_ros, three levels above
    site-packages."""
    layout(os.path.join("prefix", SITE))
    share(tmp_path / "prefix" / "share" / "cond_ros")
    assert resources.share_dir() == str(tmp_path / "prefix" / "share" / "cond_ros")
    assert resources.scene_files() == {"demo": str(tmp_path / "prefix" / "share" / "cond_ros" / "config" / "demo.yaml")}


def test_ament_prefix_path(tmp_path, layout, monkeypatch):
    """A sourced workspace whose Python path is elsewhere: the ament index marker names the prefix."""
    layout(os.path.join("python_elsewhere", SITE))
    prefix = tmp_path / "ws" / "install" / "cond_ros"
    share(prefix / "share" / "cond_ros")
    marker = prefix / "share" / "ament_index" / "resource_index" / "packages"
    marker.mkdir(parents=True)
    (marker / "cond_ros").write_text("")
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join([str(tmp_path / "other"), str(prefix)]))
    assert resources.share_dir() == str(prefix / "share" / "cond_ros")


def test_missing_data_names_where_it_looked(tmp_path, layout):
    """No data anywhere (or only another package's): ResourceError lists every place tried."""
    layout(os.path.join("prefix", SITE))
    share(tmp_path / "prefix" / "share" / "cond_ros", name="not_cond_ros")
    with pytest.raises(resources.ResourceError) as info:
        resources.share_dir()
    message = str(info.value)
    assert str(tmp_path / "prefix" / "share" / "cond_ros") in message and "package.xml" in message
    assert "no_user_base" in message
