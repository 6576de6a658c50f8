"""Finds the peer libraries tutti_perf compares with (Open MPI, Gloo) and exposes them as @local_peers.

Nothing is downloaded: both come from the system (tools/setup.sh --peers installs Debian's
openmpi-bin, libopenmpi-dev and libgloo-dev). @local_peers//:defs.bzl defines

  MPI_AVAILABLE, MPIRUN (absolute path of mpirun, "" when absent), GLOO_AVAILABLE

and @local_peers//:mpi, @local_peers//:gloo are cc_library targets (empty when the library is
absent; targets that use them take tools/bazel/peers.bzl's mpi_compat()/gloo_compat() as
target_compatible_with, so `bazel build/test //...` skips them).

Where the libraries are looked for:
  MPI:  $MPI_HOME (include/mpi.h, lib/libmpi.so), else the include and library directories the
        Open MPI compiler wrapper reports (`mpicc --showme:incdirs` / `--showme:libdirs`), else
        Debian's /usr/lib/x86_64-linux-gnu/openmpi.
  Gloo: $GLOO_HOME (include/gloo/context.h, lib/libgloo.so), else /usr/local and /usr (lib,
        lib64 and lib/x86_64-linux-gnu).

The repository environment can turn them off: --repo_env=TUTTI_PEERS=0 (both), TUTTI_MPI=0,
TUTTI_GLOO=0; this is how CI-like checks "without the peers" are run on a machine that has them.
Bazel looks again when that environment changes or a new Bazel server starts; after installing
the libraries into a running one, `bazel sync --configure` makes it look.
"""

def _exists(ctx, path):
    return path != "" and ctx.path(path).exists

def _wrapper_dirs(ctx, wrapper, what):
    """Directories an Open MPI wrapper reports (`--showme:incdirs`); [] when it cannot say."""
    if wrapper == None:
        return []
    r = ctx.execute([str(wrapper), "--showme:" + what], timeout = 30)
    if r.return_code != 0:
        return []
    return [d for d in r.stdout.strip().split(" ") if d]

def _find_mpi(ctx):
    """A struct(incdirs, libdir, mpirun) for the MPI to use, or None."""
    env = ctx.os.environ
    if env.get("TUTTI_PEERS", "1") == "0" or env.get("TUTTI_MPI", "1") == "0":
        return None
    candidates = []  # (include dirs, library dir)
    home = env.get("MPI_HOME", "")
    if home:
        candidates.append(([home + "/include"], home + "/lib"))
    wrapper = ctx.which("mpicc") or ctx.which("mpicxx")
    incs = _wrapper_dirs(ctx, wrapper, "incdirs")
    libs = _wrapper_dirs(ctx, wrapper, "libdirs")
    if incs and libs:
        candidates.append((incs, libs[0]))
    deb = "/usr/lib/x86_64-linux-gnu/openmpi"
    candidates.append(([deb + "/include", deb + "/include/openmpi"], deb + "/lib"))
    for incdirs, libdir in candidates:
        if not [d for d in incdirs if _exists(ctx, d + "/mpi.h")]:
            continue
        if not _exists(ctx, libdir + "/libmpi.so"):
            continue
        mpirun = ""
        for p in ([home + "/bin/mpirun"] if home else []) + ([str(wrapper.dirname) + "/mpirun"] if wrapper else []):
            if _exists(ctx, p):
                mpirun = p
                break
        if not mpirun:
            w = ctx.which("mpirun")
            mpirun = str(w) if w else ""
        return struct(incdirs = [d for d in incdirs if _exists(ctx, d)], libdir = libdir, mpirun = mpirun)
    return None

def _find_gloo(ctx):
    """A struct(incdir, libdir) for Gloo, or None."""
    env = ctx.os.environ
    if env.get("TUTTI_PEERS", "1") == "0" or env.get("TUTTI_GLOO", "1") == "0":
        return None
    roots = []
    if env.get("GLOO_HOME", ""):
        roots.append(env["GLOO_HOME"])
    roots += ["/usr/local", "/usr"]
    for root in roots:
        if not _exists(ctx, root + "/include/gloo/context.h"):
            continue
        for libdir in [root + "/lib", root + "/lib64", root + "/lib/x86_64-linux-gnu"]:
            if _exists(ctx, libdir + "/libgloo.so"):
                return struct(incdir = root + "/include", libdir = libdir)
    return None

# Directories the dynamic loader searches anyway (no rpath needed).
_LOADER_DIRS = ["/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"]

def _link_opts(libdir, lib):
    rpath = [] if libdir in _LOADER_DIRS else ["-Wl,-rpath," + libdir]
    return ["-L" + libdir] + rpath + ["-l" + lib]

def _peers_configure_impl(ctx):
    mpi = _find_mpi(ctx)
    gloo = _find_gloo(ctx)
    build = ['package(default_visibility = ["//visibility:public"])', ""]

    if mpi:
        # The headers are linked into this repository so that Bazel's header checks see them as
        # declared (the system directory is not one of the toolchain's built-in ones).
        hdr_globs = []
        incs = []
        for i, d in enumerate(mpi.incdirs):
            ctx.symlink(d, "mpi_include%d" % i)
            hdr_globs.append("mpi_include%d/**/*.h" % i)
            incs.append("mpi_include%d" % i)
        build.append("""cc_library(
    name = "mpi",
    hdrs = glob({hdrs}),
    includes = {incs},
    # The C API only: no MPI C++ bindings (deprecated; Open MPI's mpi.h pulls them in otherwise).
    defines = ["OMPI_SKIP_MPICXX", "MPICH_SKIP_MPICXX"],
    linkopts = {linkopts},
)
""".format(hdrs = repr(hdr_globs), incs = repr(incs), linkopts = repr(_link_opts(mpi.libdir, "mpi"))))
    else:
        build.append('cc_library(name = "mpi")\n')

    if gloo:
        ctx.symlink(gloo.incdir + "/gloo", "gloo_include/gloo")
        build.append("""cc_library(
    name = "gloo",
    hdrs = glob(["gloo_include/gloo/**/*.h"]),
    includes = ["gloo_include"],
    linkopts = {linkopts} + ["-pthread"],
)
""".format(linkopts = repr(_link_opts(gloo.libdir, "gloo"))))
    else:
        build.append('cc_library(name = "gloo")\n')

    ctx.file("BUILD", "\n".join(build))
    ctx.file("defs.bzl", "\n".join([
        "# Generated by //tools/bazel:peers_configure.bzl.",
        "MPI_AVAILABLE = %s" % (mpi != None),
        "MPIRUN = %s" % repr(mpi.mpirun if mpi else ""),
        "MPI_LIB_DIR = %s" % repr(mpi.libdir if mpi else ""),
        "GLOO_AVAILABLE = %s" % (gloo != None),
        "GLOO_LIB_DIR = %s" % repr(gloo.libdir if gloo else ""),
        "",
    ]))

peers_configure = repository_rule(
    implementation = _peers_configure_impl,
    environ = ["TUTTI_PEERS", "TUTTI_MPI", "TUTTI_GLOO", "MPI_HOME", "GLOO_HOME"],
    local = True,
    configure = True,
)
