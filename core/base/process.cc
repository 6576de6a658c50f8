#include "core/base/process.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>

namespace tutti {

namespace {
std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

std::string Link(const char* path) {
  char buf[256];
  ssize_t n = readlink(path, buf, sizeof(buf) - 1);
  return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

std::string Machine() { return FirstLine("/proc/sys/kernel/random/boot_id") + "/" + Link("/proc/self/ns/pid"); }
}  // namespace

bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  const std::string stat = FirstLine("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');  // the state follows the command name in parentheses
  return close != std::string::npos && close + 2 < stat.size() && (stat[close + 2] == 'Z' || stat[close + 2] == 'X');
}

std::string ProcessIdentity() { return Machine() + " " + std::to_string(getpid()); }

pid_t LocalPid(const std::string& identity) {
  const size_t sp = identity.rfind(' ');
  if (sp == std::string::npos || identity.compare(0, sp, Machine()) != 0) return -1;
  char* end = nullptr;
  long pid = std::strtol(identity.c_str() + sp + 1, &end, 10);
  return *end == '\0' && pid > 0 && pid <= INT32_MAX ? static_cast<pid_t>(pid) : -1;
}

}  // namespace tutti
