"""tutti_fuzz_target: one fuzz target source built two ways (see tests/fuzz/BUILD)."""

def _headers_of_impl(ctx):
    return [CcInfo(compilation_context = ctx.attr.lib[CcInfo].compilation_context)]

# The headers of a cc_library (its own and its dependencies'), without anything to link: lets a
# target compile one source file of a library whose other files need not build (see BUILD).
headers_of = rule(
    implementation = _headers_of_impl,
    attrs = {"lib": attr.label(providers = [CcInfo])},
)

def tutti_fuzz_target(name, deps, mutations = 50000, linkopts = {}):
    """Declares the targets of fuzz target `name` (source: `name`.cc, seeds: corpus/`name`/).

    `name`: with --config=fuzz (clang-14) a libFuzzer binary; otherwise the replay driver over
    the same code (run it on a crashing input to reproduce it with GCC).
    `name`_test: the replay driver over the seeds plus `mutations` deterministic mutations.
    `deps` may be a select(); `linkopts` = {"fuzzing": [...]} adds link options to the libFuzzer
    binary.
    """
    native.cc_library(
        name = name + "_lib",
        testonly = True,
        srcs = [name + ".cc"],
        deps = deps + [":fuzz_util"],
        copts = select({
            ":fuzzing": ["-DTUTTI_LIBFUZZER"],
            "//conditions:default": [],
        }),
        alwayslink = True,
    )
    native.cc_binary(
        name = name,
        testonly = True,
        deps = [":" + name + "_lib"] + select({
            ":fuzzing": [],
            "//conditions:default": [":replay_main"],
        }),
        linkopts = select({
            ":fuzzing": ["-fsanitize=fuzzer"] + linkopts.get("fuzzing", []),
            "//conditions:default": [],
        }),
    )
    corpus = "corpus/" + name
    native.cc_test(
        name = name + "_test",
        size = "small",
        linkstatic = True,
        linkopts = select({
            ":fuzzing": linkopts.get("fuzzing", []),
            "//conditions:default": [],
        }),
        data = native.glob([corpus + "/*"]),
        args = ["--mutations=%d" % mutations, native.package_name() + "/" + corpus],
        deps = [
            ":" + name + "_lib",
            ":replay_main",
        ],
    )
