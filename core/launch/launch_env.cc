#include "core/launch/launch_env.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "core/base/env.h"
#include "core/base/logging.h"

namespace tutti {

namespace {

constexpr int kDefaultMasterPort = 29500;

std::string Quoted(const char* name, const std::string& value) {
  return std::string(name) + "=\"" + value + "\"";
}

// A decimal integer that fits an int ("08" is 8, "0x8" and "8 " are errors).
Result<int> ParseDecimal(const char* name, const std::string& text) {
  size_t i = (!text.empty() && text[0] == '-') ? 1 : 0;
  if (i == text.size()) return InvalidArgument(Quoted(name, text) + " is not an integer");
  int64_t v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9')
      return InvalidArgument(Quoted(name, text) + " is not an integer");
    v = v * 10 + (text[i] - '0');
    if (v > INT32_MAX) return InvalidArgument(Quoted(name, text) + " is out of range");
  }
  return static_cast<int>(text[0] == '-' ? -v : v);
}

// The integer value of a variable, or nullopt when it is unset.
Result<std::optional<int>> OptInt(const char* name) {
  std::optional<std::string> raw = EnvRaw(name);
  if (!raw) return std::optional<int>();
  TUTTI_ASSIGN_OR_RETURN(int v, ParseDecimal(name, *raw));
  return std::optional<int>(v);
}

// The variables one launcher sets; local_size is null for srun (it has a per-node list).
struct SourceVars {
  const char* source;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;
};
constexpr SourceVars kTorchrun{"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK",
                               "LOCAL_WORLD_SIZE"};
constexpr SourceVars kMpirun{"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                             "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"};
constexpr SourceVars kSrun{"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr};

// Rank and size of one source: nullopt when neither is set, an error when only one is.
Result<std::optional<std::pair<int, int>>> ReadPair(const SourceVars& v) {
  TUTTI_ASSIGN_OR_RETURN(std::optional<int> rank, OptInt(v.rank));
  TUTTI_ASSIGN_OR_RETURN(std::optional<int> size, OptInt(v.size));
  if (!rank && !size) return std::optional<std::pair<int, int>>();
  if (!rank || !size) {
    const char* set = rank ? v.rank : v.size;
    const char* unset = rank ? v.size : v.rank;
    return InvalidArgument(Quoted(set, *EnvRaw(set)) + " is set but " + unset + " is not");
  }
  return std::optional<std::pair<int, int>>(std::make_pair(*rank, *size));
}

Status CheckRange(const char* name, int value, int lo, int hi_excl, const std::string& hi_desc) {
  if (value >= lo && value < hi_excl) return OkStatus();
  return InvalidArgument(Quoted(name, std::to_string(value)) + " is out of range [" +
                         std::to_string(lo) + ", " + hi_desc + ")");
}

// Fills the local rank and size. Neither set: every rank is on this host.
Status FillLocal(const SourceVars& v, std::optional<int> local_rank, std::optional<int> local_size,
                 const char* local_size_name, LaunchInfo* info) {
  if (local_size) {
    TUTTI_RETURN_IF_ERROR(CheckRange(local_size_name, *local_size, 1, info->world_size + 1,
                                     std::string(v.size) + "+1=" +
                                         std::to_string(info->world_size + 1)));
    info->local_world_size = *local_size;
  } else {
    info->local_world_size = info->world_size;
  }
  if (local_rank) {
    info->local_rank = *local_rank;
  } else if (info->local_world_size == info->world_size) {
    info->local_rank = info->rank;
  } else {
    return InvalidArgument(std::string(v.local_rank) + " is not set but " +
                           Quoted(local_size_name, std::to_string(*local_size)) +
                           " says the ranks span several hosts");
  }
  return CheckRange(v.local_rank, info->local_rank, 0, info->local_world_size,
                    std::string(local_size_name) + "=" + std::to_string(info->local_world_size));
}

// srun: the tasks on this node from SLURM_NTASKS_PER_NODE (or SLURM_STEP_TASKS_PER_NODE).
Result<std::optional<int>> SrunLocalSize(const char** name_used) {
  const char* name = "SLURM_NTASKS_PER_NODE";
  std::optional<std::string> text = EnvRaw(name);
  if (!text) {
    name = "SLURM_STEP_TASKS_PER_NODE";
    text = EnvRaw(name);
  }
  *name_used = name;
  if (!text) return std::optional<int>();
  TUTTI_ASSIGN_OR_RETURN(std::optional<int> node, OptInt("SLURM_NODEID"));
  Result<int> n = SlurmTasksOnNode(*text, node.value_or(0));
  if (!n.ok()) return n.status().WithContext(name);
  return std::optional<int>(*n);
}

Status FillMaster(LaunchInfo* info) {
  if (std::optional<std::string> addr = EnvRaw("MASTER_ADDR")) {
    info->master_addr = *addr;
  } else if (info->source == "srun" && EnvRaw("SLURM_NODELIST")) {
    std::string list = *EnvRaw("SLURM_NODELIST");
    Result<std::vector<std::string>> hosts = ExpandSlurmNodeList(list);
    if (!hosts.ok()) return hosts.status().WithContext(Quoted("SLURM_NODELIST", list));
    info->master_addr = hosts->front();
  } else if (info->local_world_size == info->world_size) {
    info->master_addr = "127.0.0.1";
  } else {
    return InvalidArgument("MASTER_ADDR is not set and the " + std::to_string(info->world_size) +
                           " ranks (" + info->source +
                           ") span several hosts; set it to the host of rank 0");
  }
  TUTTI_ASSIGN_OR_RETURN(std::optional<int> port, OptInt("MASTER_PORT"));
  if (port) {
    TUTTI_RETURN_IF_ERROR(CheckRange("MASTER_PORT", *port, 1, 65536, "65536"));
    info->master_port = *port;
  } else if (info->world_size > 1) {
    info->master_port = kDefaultMasterPort;
  }
  return OkStatus();
}

}  // namespace

Result<int> SlurmTasksOnNode(const std::string& text, int node_index) {
  std::vector<std::pair<int, int>> entries;  // (tasks, node count)
  size_t i = 0;
  auto bad = [&] {
    return InvalidArgument("\"" + text + "\" is not a tasks-per-node list like 4(x2),3");
  };
  auto number = [&](int* out) {
    size_t start = i;
    int64_t v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && v <= INT32_MAX)
      v = v * 10 + (text[i++] - '0');
    *out = static_cast<int>(v);
    return i > start && v <= INT32_MAX;
  };
  while (true) {
    int tasks = 0, count = 1;
    if (!number(&tasks) || tasks < 1) return bad();
    if (i < text.size() && text[i] == '(') {
      if (text.compare(i, 2, "(x") != 0) return bad();
      i += 2;
      if (!number(&count) || count < 1 || i >= text.size() || text[i] != ')') return bad();
      ++i;
    }
    entries.emplace_back(tasks, count);
    if (i == text.size()) break;
    if (text[i++] != ',') return bad();
  }
  int64_t node = 0;
  for (const auto& [tasks, count] : entries) {
    if (node_index >= node && node_index < node + count) return tasks;
    node += count;
  }
  return entries.front().first;
}

Result<LaunchInfo> LaunchInfoFromEnv() {
  LaunchInfo info;
  const SourceVars* src = nullptr;
  std::optional<std::pair<int, int>> pair;
  for (const SourceVars* v : {&kTorchrun, &kMpirun, &kSrun}) {
    TUTTI_ASSIGN_OR_RETURN(pair, ReadPair(*v));
    if (pair) {
      src = v;
      break;
    }
  }
  if (src == nullptr) {
    info.source = "single";
  } else {
    info.source = src->source;
    info.rank = pair->first;
    info.world_size = pair->second;
    if (info.world_size < 1)
      return InvalidArgument(Quoted(src->size, std::to_string(info.world_size)) +
                             " must be at least 1");
    TUTTI_RETURN_IF_ERROR(CheckRange(src->rank, info.rank, 0, info.world_size,
                                     std::string(src->size) + "=" +
                                         std::to_string(info.world_size)));
    TUTTI_ASSIGN_OR_RETURN(std::optional<int> local_rank, OptInt(src->local_rank));
    std::optional<int> local_size;
    const char* local_size_name = src->local_size;
    if (src == &kSrun) {
      TUTTI_ASSIGN_OR_RETURN(local_size, SrunLocalSize(&local_size_name));
      // The per-node list is approximate when SLURM_NODEID is missing; keep it consistent.
      if (local_size && local_rank && *local_rank >= *local_size) local_size = *local_rank + 1;
      if (local_size && *local_size > info.world_size) local_size = info.world_size;
    } else {
      TUTTI_ASSIGN_OR_RETURN(local_size, OptInt(src->local_size));
    }
    TUTTI_RETURN_IF_ERROR(FillLocal(*src, local_rank, local_size, local_size_name, &info));
  }
  TUTTI_RETURN_IF_ERROR(FillMaster(&info));
  info.secret = EnvRaw("TUTTI_SECRET").value_or("");
  TUTTI_LOG(Info, Launch, "rank %d of %d (local %d of %d) from %s; store at %s:%d", info.rank,
            info.world_size, info.local_rank, info.local_world_size, info.source.c_str(),
            info.master_addr.c_str(), info.master_port);
  return info;
}

}  // namespace tutti
