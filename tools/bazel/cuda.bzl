"""cuda_library: compiles .cu files with the local nvcc into a cc_library (no rules_cuda).

Architectures come from --define=cuda_arch=90 (comma list, default 90), as machine code for each
and PTX for the last. Without CUDA the target
is incompatible and skipped by `bazel build/test //...`.
"""

load("@local_cuda//:defs.bzl", "CUDA_AVAILABLE", "NVCC")

def _nvcc_compile_impl(ctx):
    archs = ctx.var.get("cuda_arch", "90").split(",")
    outs = []
    includes = depset(transitive = [d[CcInfo].compilation_context.includes for d in ctx.attr.deps])
    quote = depset(transitive = [d[CcInfo].compilation_context.quote_includes for d in ctx.attr.deps])
    hdrs = depset(ctx.files.hdrs, transitive = [d[CcInfo].compilation_context.headers for d in ctx.attr.deps])
    for src in ctx.files.srcs:
        out = ctx.actions.declare_file(ctx.label.name + "/" + src.basename.replace(".cu", ".pic.o"))
        args = ctx.actions.args()
        args.add("-c", src)
        args.add("-o", out)
        args.add("-std=c++20")
        args.add("-O3")
        args.add_all(["-Xcompiler", "-fPIC"])
        args.add("-I.")
        args.add("-I" + ctx.bin_dir.path)
        for a in archs:
            args.add("-gencode=arch=compute_{a},code=sm_{a}".format(a = a))
        # PTX of the newest architecture too, so later GPUs can JIT-compile the kernels.
        args.add("-gencode=arch=compute_{a},code=compute_{a}".format(a = archs[-1]))
        args.add_all(includes, format_each = "-I%s")
        args.add_all(quote, format_each = "-I%s")
        ctx.actions.run(
            executable = NVCC,
            arguments = [args],
            inputs = depset([src], transitive = [hdrs]),
            outputs = [out],
            mnemonic = "Nvcc",
            progress_message = "nvcc %s" % src.short_path,
            use_default_shell_env = True,
        )
        outs.append(out)
    return [DefaultInfo(files = depset(outs))]

_nvcc_compile = rule(
    implementation = _nvcc_compile_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".cu"]),
        "hdrs": attr.label_list(allow_files = True),
        "deps": attr.label_list(providers = [CcInfo]),
    },
)

def cuda_library(name, srcs, hdrs = [], deps = [], **kwargs):
    """A cc_library whose objects come from nvcc; incompatible when CUDA is absent."""
    compat = [] if CUDA_AVAILABLE else ["//tools/bazel:cuda_missing"]
    _nvcc_compile(
        name = name + "_objs",
        srcs = srcs,
        hdrs = hdrs,
        deps = deps + ["@local_cuda//:cuda_headers"],
        target_compatible_with = compat,
    )
    # Linked into the program, never into a shared library of its own: the CUDA runtime is
    # linked statically and must exist once per program (tests link libraries dynamically).
    native.cc_library(
        name = name,
        srcs = [":" + name + "_objs"],
        hdrs = hdrs,
        linkstatic = True,
        deps = deps + ["@local_cuda//:cudart_static"],
        target_compatible_with = compat,
        **kwargs
    )

def cuda_compat():
    """target_compatible_with for cc targets that need the CUDA runtime."""
    return [] if CUDA_AVAILABLE else ["//tools/bazel:cuda_missing"]
