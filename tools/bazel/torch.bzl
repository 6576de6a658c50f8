"""target_compatible_with helper for targets that need PyTorch (@local_torch).

Without torch in the project's virtual environment (tools/setup.sh --torch), or with
--repo_env=TUTTI_TORCH=0, they point at a constraint no platform has, so `bazel build/test //...`
skips them (see torch_configure.bzl).
"""

load("@local_torch//:defs.bzl", "PYTHON", "TORCH_AVAILABLE")

def torch_compat():
    return [] if TORCH_AVAILABLE else ["//tools/bazel:torch_missing"]

# Absolute path of the interpreter that has torch ("" without it), for tests that run Python.
TORCH_PYTHON = PYTHON

def torch_py_test(name, src, data = [], args = [], size = "medium", **kwargs):
    """A Python test of the torch backend: `src` runs under the interpreter that has torch, with
    tutti_torch installed into a scratch directory it gets as its first argument (then `args`).
    Skipped where torch is absent."""
    native.sh_test(
        name = name,
        size = size,
        srcs = ["//tools/torch:py_test.sh"],
        args = [
            TORCH_PYTHON,
            "$(rootpath //tools/torch:install.sh)",
            "$(rootpath //tools/torch:tutti_torch/__init__.py)",
            "$(rootpath //tools/torch:tutti_torch/_C.so)",
            "$(rootpath %s)" % src,
        ] + args,
        data = [
            src,
            "//tools/torch:install.sh",
            "//tools/torch:tutti_torch/__init__.py",
            "//tools/torch:tutti_torch/_C.so",
        ] + data,
        target_compatible_with = torch_compat(),
        **kwargs
    )
