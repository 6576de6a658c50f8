// Other processes on this machine, as far as liveness checks need them.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/status.h"

namespace tutti {

// True if `pid` no longer runs: it does not exist, or it is a zombie its parent has not reaped
// yet (a killed rank stays one until its launcher waits for it).
bool ProcessGone(pid_t pid);

// "<boot id>/<pid namespace> <pid>" of this process: two processes with the same text before
// the space can check each other's pids.
std::string ProcessIdentity();

// The pid in `identity` (from ProcessIdentity of another process) if that process is on this
// machine and in this pid namespace, else -1.
pid_t LocalPid(const std::string& identity);

// Copies `len` bytes between `local` in this process and address `remote` in process `pid`
// (process_vm_readv, or process_vm_writev when `write`), resuming after partial copies.
// kUnavailable when the kernel refuses such copies (EPERM: ptrace policy; ENOSYS); the error
// names the call, and the caller says with whom.
Status CopyProcessMemory(pid_t pid, void* local, uint64_t remote, size_t len, bool write);

}  // namespace tutti
