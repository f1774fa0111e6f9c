"""Prints the folder of the nvidia-nccl wheel (site-packages/nvidia/nccl) that CMake should use, or
nothing: the interpreter's own environment first, then the base installation a virtual
environment was made from, then the user's site-packages (cmake/nccl.cmake runs this)."""

import glob
import importlib.util
import os
import site
import sys


def main() -> str:
    try:
        spec = importlib.util.find_spec("nvidia.nccl")
    except (ImportError, ValueError):
        spec = None
    if spec and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            if os.path.isfile(os.path.join(loc, "include", "nccl.h")):
                return loc
    roots = [sys.base_prefix, sys.prefix]
    try:
        roots.append(site.getusersitepackages())
    except AttributeError:
        pass
    for root in roots:
        for pattern in (
            "lib/python3*/site-packages/nvidia/nccl",
            "lib/python3*/dist-packages/nvidia/nccl",
            "local/lib/python3*/dist-packages/nvidia/nccl",
            "nvidia/nccl",
        ):
            for loc in sorted(glob.glob(os.path.join(root, pattern))):
                if os.path.isfile(os.path.join(loc, "include", "nccl.h")):
                    return loc
    return ""


print(main())
