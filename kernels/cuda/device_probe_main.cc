// Prints what the machine's GPUs can do for the transports (kernels/cuda/probe.h); the GPU check
// runs it first. Exit 0 with a line saying so when there is no GPU.
#include <cstdio>

#include "kernels/cuda/probe.h"

int main() {
  tutti::Result<std::string> report = tutti::cuda::ProbeDevices();
  if (!report.ok()) {
    std::printf("device_probe: no GPU (%s)\n", report.status().ToString().c_str());
    return 0;
  }
  std::fputs(report->c_str(), stdout);
  return report->find("FAILED") == std::string::npos ? 0 : 1;
}
