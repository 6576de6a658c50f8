"""target_compatible_with helpers for targets that need a peer library (@local_peers).

Without the library (or with --repo_env=TUTTI_PEERS=0, TUTTI_MPI=0, TUTTI_GLOO=0) they point at a
constraint no platform has, so `bazel build/test //...` skips those targets (see
peers_configure.bzl).
"""

load("@local_peers//:defs.bzl", "GLOO_AVAILABLE", "MPIRUN", "MPI_AVAILABLE")

def mpi_compat():
    """For targets that compile or link against MPI."""
    return [] if MPI_AVAILABLE else ["//tools/bazel:mpi_missing"]

def mpirun_compat():
    """For tests that start ranks with mpirun (MPI headers and library are not enough)."""
    return [] if MPI_AVAILABLE and MPIRUN else ["//tools/bazel:mpi_missing"]

def gloo_compat():
    """For targets that compile or link against Gloo."""
    return [] if GLOO_AVAILABLE else ["//tools/bazel:gloo_missing"]

# Absolute path of mpirun ("" without MPI), for tests that launch ranks with it.
MPIRUN_PATH = MPIRUN
