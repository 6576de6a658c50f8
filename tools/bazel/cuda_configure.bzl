"""Finds a local CUDA toolkit (no download) and exposes it as @local_cuda.

@local_cuda//:defs.bzl defines CUDA_AVAILABLE, NVCC and CUDA_LIB_DIR. With no nvcc, or with
TUTTI_CUDA=0 in the repository environment (--repo_env=TUTTI_CUDA=0), CUDA_AVAILABLE is False and
the CUDA targets of the tree are marked incompatible, so `bazel test //...` skips them.
"""

def _find_cuda(ctx):
    if ctx.os.environ.get("TUTTI_CUDA", "1") == "0":
        return None
    for var in ["CUDA_PATH", "CUDA_HOME"]:
        p = ctx.os.environ.get(var, "")
        if p and ctx.path(p + "/bin/nvcc").exists:
            return p
    if ctx.path("/usr/local/cuda/bin/nvcc").exists:
        return "/usr/local/cuda"
    return None

def _cuda_configure_impl(ctx):
    root = _find_cuda(ctx)
    if root == None:
        ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])
cc_library(name = "cuda_headers")
cc_library(name = "cudart")
cc_library(name = "cudart_static")
""")
        ctx.file("defs.bzl", "CUDA_AVAILABLE = False\nNVCC = \"\"\nCUDA_LIB_DIR = \"\"\n")
        return
    ctx.symlink(root + "/include", "include")
    libdir = root + "/lib64"
    if not ctx.path(libdir + "/libcudart.so").exists:
        libdir = root + "/lib"
    ctx.symlink(libdir, "lib")
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])
cc_library(
    name = "cuda_headers",
    hdrs = glob(["include/**/*.h", "include/**/*.hpp", "include/**/*.inl", "include/nv/**"]),
    includes = ["include"],
)
cc_library(
    name = "cudart",
    srcs = ["lib/libcudart.so"],
    linkopts = ["-Wl,-rpath,{libdir}", "-ldl", "-lrt"],
    deps = [":cuda_headers"],
)
# The runtime linked in: programs need only the driver (libcuda.so.1, opened by the runtime at
# run time), so a binary built here also starts on a machine without a GPU or toolkit.
cc_library(
    name = "cudart_static",
    srcs = ["lib/libcudart_static.a"],
    linkopts = ["-ldl", "-lrt", "-lpthread"],
    deps = [":cuda_headers"],
)
""".format(libdir = libdir))
    ctx.file("defs.bzl", "CUDA_AVAILABLE = True\nNVCC = \"{}/bin/nvcc\"\nCUDA_LIB_DIR = \"{}\"\n".format(root, libdir))

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_PATH", "CUDA_HOME", "TUTTI_CUDA"],
    local = True,
)
