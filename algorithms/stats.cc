#include "algorithms/stats.h"

#include <algorithm>

#include "algorithms/registry.h"

namespace tutti::algo {

ScheduleStats Stats(const Schedule& s, size_t elem_size) {
  ScheduleStats st;
  st.streams = static_cast<int>(s.streams.size());
  st.scratch_bytes = s.scratch_count * elem_size;
  for (const Stream& stream : s.streams) {
    int comm = 0;
    for (const Step& step : stream.steps) {
      if (!step.sends.empty() || !step.recvs.empty()) ++comm;
      for (const Transfer& t : step.sends) {
        ++st.messages_sent;
        st.bytes_sent += t.region.count * elem_size;
      }
      for (const Transfer& t : step.recvs) {
        ++st.messages_received;
        st.bytes_received += t.region.count * elem_size;
      }
      for (const LocalOp& l : step.locals) {
        if (l.kind == LocalOp::Kind::kCopy) st.bytes_copied += l.dst.count * elem_size;
        else st.bytes_reduced += (l.srcs.size() - 1) * l.dst.count * elem_size;
      }
    }
    st.steps = std::max(st.steps, comm);
    st.max_stream_steps = std::max(st.max_stream_steps, static_cast<int>(stream.steps.size()));
  }
  return st;
}

Result<ScheduleStats> AlgorithmStats(const std::string& algorithm, const CollArgs& args, size_t elem_size) {
  ScheduleStats m;
  CollArgs a = args;
  for (int r = 0; r < std::max(args.nranks, 1); ++r) {
    a.rank = r;
    TUTTI_ASSIGN_OR_RETURN(Schedule s, BuildSchedule(algorithm, a));
    const ScheduleStats x = Stats(s, elem_size);
    m.streams = std::max(m.streams, x.streams);
    m.steps = std::max(m.steps, x.steps);
    m.max_stream_steps = std::max(m.max_stream_steps, x.max_stream_steps);
    m.messages_sent = std::max(m.messages_sent, x.messages_sent);
    m.messages_received = std::max(m.messages_received, x.messages_received);
    m.bytes_sent = std::max(m.bytes_sent, x.bytes_sent);
    m.bytes_received = std::max(m.bytes_received, x.bytes_received);
    m.bytes_reduced = std::max(m.bytes_reduced, x.bytes_reduced);
    m.bytes_copied = std::max(m.bytes_copied, x.bytes_copied);
    m.scratch_bytes = std::max(m.scratch_bytes, x.scratch_bytes);
  }
  return m;
}

std::string ToString(const ScheduleStats& s) {
  return "streams=" + std::to_string(s.streams) + " steps=" + std::to_string(s.steps) +
         " max_stream_steps=" + std::to_string(s.max_stream_steps) + " sent=" + std::to_string(s.messages_sent) +
         " msgs/" + std::to_string(s.bytes_sent) + " B received=" + std::to_string(s.messages_received) + " msgs/" +
         std::to_string(s.bytes_received) + " B reduced=" + std::to_string(s.bytes_reduced) +
         " B copied=" + std::to_string(s.bytes_copied) + " B scratch=" + std::to_string(s.scratch_bytes) + " B";
}

}  // namespace tutti::algo
