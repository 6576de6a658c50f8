#include "core/base/process.h"

#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

Status CopyProcessMemory(pid_t pid, void* local, uint64_t remote, size_t len, bool write) {
  const char* call = write ? "process_vm_writev" : "process_vm_readv";
  size_t done = 0;
  while (done < len) {
    iovec mine{static_cast<char*>(local) + done, len - done};
    iovec theirs{reinterpret_cast<void*>(remote + done), len - done};
    const ssize_t n = write ? process_vm_writev(pid, &mine, 1, &theirs, 1, 0)
                            : process_vm_readv(pid, &mine, 1, &theirs, 1, 0);
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      const std::string what = std::string(call) + " (pid " + std::to_string(pid) + ")";
      if (err == EPERM || err == ENOSYS) return UnavailableError(what + ": " + strerror(err));
      return SystemError(what, err);
    }
    if (n == 0) return RemoteError(std::string(call) + " (pid " + std::to_string(pid) + ") moved nothing");
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

}  // namespace tutti
