// tuttirun's command line: ParseLauncherArgs, LauncherUsage, ResolveLauncherDefaults.
#include <cstdint>

#include "core/base/env.h"
#include "core/launch/launcher.h"
#include "core/launch/spawn.h"

namespace tutti {

namespace {

constexpr int kMaxProcsPerNode = 4096;
constexpr int kDefaultMultiNodePort = 29500;

Status ParseCount(const std::string& opt, const std::string& text, int lo, int hi, int* out) {
  int64_t v = 0;
  bool ok = !text.empty() && text.size() <= 10;
  for (char c : text) {
    if (c < '0' || c > '9') ok = false;
    if (ok) v = v * 10 + (c - '0');
  }
  if (!ok) return InvalidArgument(opt + " \"" + text + "\" is not a number");
  if (v < lo || v > hi)
    return InvalidArgument(opt + " " + text + " is out of range [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "]");
  *out = static_cast<int>(v);
  return OkStatus();
}

// "--node_rank" -> "--node-rank" (torchrun accepts both spellings).
std::string Canonical(std::string name) {
  for (size_t i = 2; i < name.size(); ++i)
    if (name[i] == '_') name[i] = '-';
  return name;
}

}  // namespace

std::string LauncherUsage() {
  return "usage: tuttirun [options] [--] PROG [ARGS...]\n"
         "\n"
         "Runs PROG as the ranks of one tutti job, with RANK, WORLD_SIZE, LOCAL_RANK,\n"
         "LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and TUTTI_SECRET set for each.\n"
         "\n"
         "options:\n"
         "  -n, --nproc-per-node N  ranks to start on this node (default 1)\n"
         "  --nnodes M              nodes in the job (default 1)\n"
         "  --node-rank R           index of this node, 0..M-1 (default 0); its ranks are\n"
         "                          R*N .. R*N+N-1\n"
         "  --master-addr A         host of the rendezvous store (default 127.0.0.1)\n"
         "  --master-port P         its port (default: a free port with one node, else 29500)\n"
         "  --secret S              job secret (default: TUTTI_SECRET, else random with one\n"
         "                          node; several nodes need the same one on each)\n"
         "  --timeout T             stop every rank after T (30, 90s, 5m) and exit 124\n"
         "  --no-prefix             do not prefix output lines with \"[rank R] \"\n"
         "  -h, --help              show this help\n"
         "  --                      end of options\n"
         "\n"
         "When a rank fails, the others get SIGTERM, then SIGKILL after 3 s, and tuttirun exits\n"
         "with that rank's exit code (128 + signal when it was killed). SIGINT, SIGTERM and\n"
         "SIGHUP are forwarded to every rank.\n";
}

Result<LauncherOptions> ParseLauncherArgs(const std::vector<std::string>& args) {
  LauncherOptions o;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;  // PROG
    if (a == "-h" || a == "--help") {
      o.help = true;
      return o;
    }
    if (a == "--no-prefix" || a == "--no_prefix") {
      o.prefix = false;
      continue;
    }
    std::string name = a, value;
    bool has_value = false;
    if (a.rfind("--", 0) == 0) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        has_value = true;
      }
      name = Canonical(name);
    } else if (a.rfind("-n", 0) == 0 && a.size() > 2) {  // -n4
      name = "-n";
      value = a.substr(2);
      has_value = true;
    }
    static const char* const kWithValue[] = {"-n",          "--nproc-per-node", "--nnodes",
                                             "--node-rank", "--master-addr",    "--master-port",
                                             "--timeout",   "--secret"};
    bool known = false;
    for (const char* k : kWithValue) known = known || name == k;
    if (!known) return InvalidArgument("unknown option " + a);
    if (!has_value) {
      if (i + 1 >= args.size()) return InvalidArgument("option " + name + " needs a value");
      value = args[++i];
    }
    Status st;
    if (name == "-n" || name == "--nproc-per-node") {
      st = ParseCount(name, value, 1, kMaxProcsPerNode, &o.nproc_per_node);
    } else if (name == "--nnodes") {
      st = ParseCount(name, value, 1, 1 << 20, &o.nnodes);
    } else if (name == "--node-rank") {
      st = ParseCount(name, value, 0, 1 << 20, &o.node_rank);
    } else if (name == "--master-addr") {
      if (value.empty()) st = InvalidArgument("--master-addr is empty");
      o.master_addr = value;
    } else if (name == "--master-port") {
      st = ParseCount(name, value, 1, 65535, &o.master_port);
    } else if (name == "--timeout") {
      Result<double> t = ParseSeconds(name, value);
      st = t.status();
      if (t.ok()) o.timeout_s = *t;
    } else {  // --secret
      if (value.empty()) st = InvalidArgument("--secret is empty");
      o.secret = value;
    }
    if (!st.ok()) return st;
  }
  o.command.assign(args.begin() + static_cast<long>(i), args.end());
  if (o.command.empty()) return InvalidArgument("no program to run");
  if (o.node_rank >= o.nnodes)
    return InvalidArgument("--node-rank " + std::to_string(o.node_rank) +
                           " must be less than --nnodes " + std::to_string(o.nnodes));
  if (static_cast<int64_t>(o.nnodes) * o.nproc_per_node > INT32_MAX)
    return InvalidArgument("--nnodes times --nproc-per-node is too large");
  return o;
}

Status ResolveLauncherDefaults(LauncherOptions* o) {
  if (o->master_port == 0) {
    if (o->nnodes == 1) {
      Result<int> port = PickFreePort(o->master_addr);
      if (!port.ok()) return port.status().WithContext("picking a port on --master-addr");
      o->master_port = *port;
    } else {
      o->master_port = kDefaultMultiNodePort;
    }
  }
  if (o->secret.empty()) o->secret = EnvRaw("TUTTI_SECRET").value_or("");
  if (o->secret.empty()) {
    if (o->nnodes > 1)
      return InvalidArgument("--nnodes " + std::to_string(o->nnodes) +
                             ": every node needs the same secret; pass --secret S or set "
                             "TUTTI_SECRET");
    Result<std::string> secret = RandomSecret();
    if (!secret.ok()) return secret.status();
    o->secret = *secret;
  }
  return OkStatus();
}

}  // namespace tutti
