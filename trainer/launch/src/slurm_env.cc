#include "slurm_env.h"

#include <vector>

#include "parse_text.h"

namespace ffyolo {

using ffr::Status;

Status FirstSlurmHost(const std::string& nodelist, std::string* host) {
  const auto bad = [&](const char* why) {
    return Status::InvalidArgument("SLURM_JOB_NODELIST='" + nodelist + "': " + why);
  };
  std::string out;
  size_t i = 0;
  while (i < nodelist.size() && nodelist[i] != ',') {
    if (nodelist[i] == ']') return bad("']' without '['");
    if (nodelist[i] != '[') {
      out += nodelist[i++];
      continue;
    }
    // A bracket group stands for its first element, "01" in "[01-04,07]".
    const size_t close = nodelist.find(']', i);
    if (close == std::string::npos) return bad("'[' without ']'");
    const std::string group = nodelist.substr(i + 1, close - i - 1);
    const std::string first = group.substr(0, group.find_first_of(",-"));
    if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos)
      return bad("a bracket group does not start with a number");
    out += first;
    i = close + 1;
  }
  if (out.empty()) return bad("no host name");
  *host = out;
  return Status::OK();
}

Status SlurmTasksOnNode(const std::string& tasks_per_node, int node_id, int* tasks) {
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("SLURM_TASKS_PER_NODE='" + tasks_per_node + "': " + why);
  };
  int first_node = 0;  // the first node the current entry describes
  for (const std::string& entry : SplitCommas(tasks_per_node)) {
    // "4" or "4(x2)".
    const size_t paren = entry.find("(x");
    int count = 0, repeat = 1;
    if (!ParseInt(entry.substr(0, paren), &count) || count < 1 ||
        (paren != std::string::npos &&
         (entry.back() != ')' || !ParseInt(entry.substr(paren + 2, entry.size() - paren - 3), &repeat) ||
          repeat < 1)))
      return bad("cannot read the entry '" + entry + "'");
    if (node_id < first_node + repeat) {
      *tasks = count;
      return Status::OK();
    }
    first_node += repeat;
  }
  return bad("no entry for SLURM_NODEID=" + std::to_string(node_id) + " (it describes " +
             std::to_string(first_node) + " nodes)");
}

Status SlurmJobPort(const std::string& job_id, int* port) {
  int id = 0;
  if (!ParseInt(job_id, &id) || id < 0)
    return Status::InvalidArgument("SLURM_JOB_ID='" + job_id + "' is not a job number");
  *port = 15000 + id % 10000;
  return Status::OK();
}

}  // namespace ffyolo
