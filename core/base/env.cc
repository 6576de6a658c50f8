#include "core/base/env.h"

#include <cstdlib>
#include <cstring>

namespace tutti {

namespace {
using T = EnvType;
}

const std::vector<EnvVar>& EnvRegistry() {
  static const std::vector<EnvVar> vars = {
      // Logging.
      {"TUTTI_DEBUG", T::kString, "", "Log level: WARN, INFO or TRACE (unset: errors only)."},
      {"TUTTI_DEBUG_SUBSYS", T::kString, "ALL",
       "Comma list of subsystems to log: INIT, P2P, NET, SHM, STORE, LAUNCH, ENV, COLL or ALL; "
       "a leading ^ excludes the listed ones."},
      {"TUTTI_DEBUG_FILE", T::kString, "",
       "Write the log to this file instead of stderr; %h becomes the host name, %p the pid."},
      // Rendezvous and launch (set by tuttirun, torchrun, mpirun or srun).
      {"MASTER_ADDR", T::kString, "", "Host of the rendezvous store (rank 0 hosts it)."},
      {"MASTER_PORT", T::kInt, "", "Port of the rendezvous store."},
      {"RANK", T::kInt, "", "Global rank (tuttirun, torchrun)."},
      {"WORLD_SIZE", T::kInt, "", "Number of ranks (tuttirun, torchrun)."},
      {"LOCAL_RANK", T::kInt, "", "Rank within this host (tuttirun, torchrun)."},
      {"LOCAL_WORLD_SIZE", T::kInt, "", "Ranks on this host (tuttirun, torchrun)."},
      {"OMPI_COMM_WORLD_RANK", T::kInt, "", "Global rank as set by Open MPI's mpirun."},
      {"OMPI_COMM_WORLD_SIZE", T::kInt, "", "World size as set by Open MPI's mpirun."},
      {"OMPI_COMM_WORLD_LOCAL_RANK", T::kInt, "", "Local rank as set by Open MPI's mpirun."},
      {"OMPI_COMM_WORLD_LOCAL_SIZE", T::kInt, "", "Local size as set by Open MPI's mpirun."},
      {"SLURM_PROCID", T::kInt, "", "Global rank as set by srun."},
      {"SLURM_NTASKS", T::kInt, "", "World size as set by srun."},
      {"SLURM_LOCALID", T::kInt, "", "Local rank as set by srun."},
      {"SLURM_NTASKS_PER_NODE", T::kString, "", "Tasks per node as set by srun (e.g. 4 or 4(x2))."},
      {"SLURM_STEP_TASKS_PER_NODE", T::kString, "",
       "Tasks per node of this job step as set by srun; used when SLURM_NTASKS_PER_NODE is unset."},
      {"SLURM_NODEID", T::kInt, "",
       "Index of this node in the job as set by srun; picks this node's entry of the tasks-per-node "
       "list."},
      {"SLURM_NODELIST", T::kString, "",
       "Node list as set by srun; its first host is the store's host when MASTER_ADDR is unset."},
      {"TUTTI_SECRET", T::kString, "",
       "Per-job secret checked in every store and connection handshake (tuttirun sets a random "
       "one; unset means the empty secret)."},
      {"TUTTI_STORE_BIND", T::kString, "",
       "Address rank 0's store listens on (0.0.0.0 = every interface). Unset: MASTER_ADDR's "
       "address when it is one of this host's (loopback for localhost), else every interface."},
      {"TUTTI_STORE_TIMEOUT", T::kSeconds, "300",
       "How long rendezvous waits for all ranks to join the store."},
      // Communicator.
      {"TUTTI_TIMEOUT", T::kSeconds, "300",
       "Default timeout of every blocking wait of a communicator (30, 30s, 500ms, 2m)."},
      {"TUTTI_HEARTBEAT_TIMEOUT", T::kSeconds, "30",
       "A peer silent this long (no data, no heartbeat; heartbeats go out every tenth of it) is "
       "declared dead, naming it: stopped, hung or cut off. 0 = no heartbeats."},
      {"TUTTI_HOST_ID", T::kString, "",
       "Identity of this host for choosing transports (default: hostname and boot id); ranks "
       "with equal ids use shared memory."},
      {"TUTTI_TRANSPORT", T::kString, "auto",
       "auto (shm inside a host, tcp between hosts), or force shm or tcp for every peer."},
      {"TUTTI_SOCKET_IFNAME", T::kString, "",
       "Interfaces for TCP, as NCCL_SOCKET_IFNAME: prefix list (eth,ib), ^ to exclude, = for "
       "exact names. Default: the first non-loopback interface that is up, else loopback."},
      {"TUTTI_SOCKET_NSOCKS", T::kInt, "2", "TCP sockets per peer pair (1..16)."},
      {"TUTTI_SOCKET_BUFSIZE", T::kInt, "4194304", "SO_SNDBUF/SO_RCVBUF of each TCP socket."},
      {"TUTTI_SHM_FIFO_BYTES", T::kInt, "4194304",
       "Size of each shared-memory FIFO (one per direction per peer pair, a power of two); large "
       "messages stream through it in pieces of up to 512 KiB."},
      {"TUTTI_EAGER_LIMIT", T::kInt, "65536",
       "Messages up to this size are sent eagerly (copied); larger ones are pulled by the "
       "receiver straight from the sender's buffer (shm) or sent after the receiver is ready."},
      {"TUTTI_SHM_CMA", T::kString, "copies",
       "Large shared-memory messages (above TUTTI_EAGER_LIMIT) moved with process_vm_readv/writev "
       "(one copy; from 1 MiB, once a read has worked, the two processes each copy half) instead "
       "of streamed through the FIFO: copies (up to 4 MiB, receives that nothing is combined "
       "into: point-to-point, all_gather, gather, scatter, all_to_all and their v-forms; and the "
       "pieces of a 2-8 MiB all_reduce or reduce_scatter where every rank has a CPU), 1 "
       "(every message), 0 (none). Where the kernel refuses (ptrace policy), the FIFO."},
      // Collectives.
      {"TUTTI_ALGO", T::kString, "",
       "Force algorithms: one name for every collective that has it (ring, tree, rhd, doubling, bruck, "
       "binomial, flat, pairwise, dissemination), or per collective: allreduce:tree,allgather:ring."},
      {"TUTTI_NCHANNELS", T::kInt, "1", "Parallel streams (rings) a collective may use (1..64)."},
      {"TUTTI_CHUNK_BYTES", T::kInt, "0",
       "Pipelining piece of the ring and tree algorithms in bytes (0: the algorithm's choice, or "
       "pieces for every algorithm over tcp, which keep a network link busy both ways: 64 KiB for "
       "calls up to 4 MiB between hosts, 1 MiB on one host whose ranks outnumber its CPUs, else "
       "256 KiB)."},
      {"TUTTI_SLOT_MAX", T::kInt, "1048576",
       "Communicators whose ranks share one host run collectives up to this size (bytes, as "
       "nccl-tests counts them) through shared slots: one copy in, readers reduce or copy "
       "straight out, no messages (all_gather, gather, scatter and all_to_all whose blocks exceed "
       "TUTTI_EAGER_LIMIT go as messages where copies are read one-sidedly and the ranks have a "
       "CPU each). 0 turns the slots off. Rank 0's setting holds for all."},
      {"TUTTI_SLOT_BYTES", T::kInt, "65536",
       "The most bytes a rank puts into the slots in one round of a call (a ring of 1024 units of "
       "1 KiB per rank, or of slot bytes / 64 when larger: 16 such rounds in flight at once); a "
       "larger call pipelines through them in rounds. Rank 0's setting holds for all."},
      {"TUTTI_STRICT_CHECKS", T::kBool, "0",
       "1: in collectives through the shared slots every rank compares every rank's call each "
       "round, so a mismatched call fails on every rank at once; 0: a rank compares only the "
       "ranks whose data it takes (a broadcast's root waits for no one) and calls in which two "
       "ranks do not meet are compared at the next call that connects them. Rank 0's setting "
       "holds for all."},
      {"TUTTI_FUSED", T::kBool, "1",
       "Collectives on device memory of communicators whose ranks share a host run as one kernel "
       "per rank over FIFO connections in device memory (CUDA IPC), with no host staging; 0 sends "
       "them through page-locked host memory instead. Must be the same on every rank."},
      {"TUTTI_FUSED_LL_MAX", T::kInt, "16384",
       "Fused calls up to this many bytes (as nccl-tests counts them) take the LL protocol (data and "
       "flag in one store), larger ones Simple (slots and a counter). Must be the same on every rank."},
      {"TUTTI_COST_SHM", T::kString, "",
       "Cost model of shared memory for algorithm selection: \"alpha_us,GBps,reduce_GBps\"."},
      {"TUTTI_COST_TCP", T::kString, "", "Cost model of TCP, as TUTTI_COST_SHM."},
      {"TUTTI_SPIN_US", T::kInt, "50",
       "Microseconds a waiting thread polls flat out before it starts yielding the core (default "
       "0 when the ranks on a host outnumber the cores they may run on)."},
      {"TUTTI_YIELD_US", T::kInt, "2000",
       "Microseconds a waiting thread keeps polling while yielding the core to other runnable "
       "threads, before it sleeps (back-off up to 1 ms)."},
      {"TUTTI_MOVE_WAITERS", T::kBool, "1",
       "A waiting thread that finds a rank it waits for running on its own CPU (ranks of a "
       "communicator on one host) moves itself to an allowed CPU no rank waits on; 0: it only "
       "yields its CPU to that rank."},
      {"TUTTI_LOCAL_ENGINE", T::kString, "inline",
       "Where collectives' copies and reductions on host memory run: inline (on the thread that "
       "progresses the call) or worker (a thread of the communicator, overlapping them with "
       "messages)."},
      {"TUTTI_CONNECT", T::kString, "eager",
       "When pairs of ranks connect: eager (every pair during init) or lazy (a pair the first "
       "time one of them sends to or receives from the other, so only the pairs a job uses)."},
  };
  return vars;
}

const EnvVar* FindEnvVar(const std::string& name) {
  for (const EnvVar& v : EnvRegistry())
    if (name == v.name) return &v;
  return nullptr;
}

std::optional<std::string> EnvRaw(const char* name) {
  if (FindEnvVar(name) == nullptr) return std::nullopt;
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

namespace {
Result<std::string> ValueOrDefault(const char* name) {
  const EnvVar* var = FindEnvVar(name);
  if (var == nullptr) return InternalError(std::string("undeclared environment variable ") + name);
  std::optional<std::string> raw = EnvRaw(name);
  return raw ? *raw : std::string(var->default_value);
}
}  // namespace

Result<int64_t> ParseInt(const std::string& name, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 0);
  if (text.empty() || errno != 0 || *end != '\0')
    return InvalidArgument(name + "=\"" + text + "\" is not an integer");
  return static_cast<int64_t>(v);
}

Result<bool> ParseBool(const std::string& name, const std::string& text) {
  if (text == "1" || text == "true" || text == "yes" || text == "on") return true;
  if (text == "0" || text == "false" || text == "no" || text == "off") return false;
  return InvalidArgument(name + "=\"" + text + "\" is not a boolean (1/0, true/false)");
}

Result<double> ParseSeconds(const std::string& name, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || end == text.c_str() || !(v >= 0))  // NaN is not a duration
    return InvalidArgument(name + "=\"" + text + "\" is not a duration");
  std::string unit(end);
  if (unit == "" || unit == "s") return v;
  if (unit == "ms") return v / 1000;
  if (unit == "us") return v / 1e6;
  if (unit == "m") return v * 60;
  if (unit == "h") return v * 3600;
  return InvalidArgument(name + "=\"" + text + "\" has an unknown unit (use s, ms, us, m or h)");
}

Result<std::string> EnvString(const char* name) { return ValueOrDefault(name); }

Result<int64_t> EnvInt(const char* name) {
  TUTTI_ASSIGN_OR_RETURN(std::string v, ValueOrDefault(name));
  if (v.empty()) return InvalidArgument(std::string(name) + " is not set");
  return ParseInt(name, v);
}

Result<bool> EnvBool(const char* name) {
  TUTTI_ASSIGN_OR_RETURN(std::string v, ValueOrDefault(name));
  return ParseBool(name, v);
}

Result<double> EnvSeconds(const char* name) {
  TUTTI_ASSIGN_OR_RETURN(std::string v, ValueOrDefault(name));
  return ParseSeconds(name, v);
}

}  // namespace tutti
