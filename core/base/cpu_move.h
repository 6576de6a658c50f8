// Moving the calling thread off the CPU it runs on, to another CPU it is allowed on, without
// changing the set of CPUs it is allowed on.
#pragma once

#include <functional>

namespace tutti {

// The number of CPUs the calling thread may run on (at least 1).
int AllowedCpus();

// Moves the calling thread from CPU `from` to the first other CPU it is allowed on for which
// `avoid` is false, and allows it its former CPUs again (it stays where it was moved until the
// scheduler moves it). Returns that CPU, or -1 (no such CPU, or the kernel refused: the thread
// is where it was and keeps its allowed set).
int MoveOffCpu(int from, const std::function<bool(int)>& avoid);

}  // namespace tutti
