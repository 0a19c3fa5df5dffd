// The parts of SLURM's job environment that need parsing beyond one integer.
#pragma once

#include <string>

#include "ffr/status.h"

namespace ffyolo {

// The first host of a SLURM hostlist: "node[01-04,07],gpu5" -> "node01",
// "rack[1-2]-n[3-4]" -> "rack1-n3" (zero padding kept).
ffr::Status FirstSlurmHost(const std::string& nodelist, std::string* host);

// This node's task count from SLURM_TASKS_PER_NODE ("4(x2),3": nodes 0-1 run
// 4 tasks, node 2 runs 3).
ffr::Status SlurmTasksOnNode(const std::string& tasks_per_node, int node_id, int* tasks);

// The rendezvous port every task of a job derives alike: 15000 + the last
// four digits of SLURM_JOB_ID (PyTorch Lightning's rule), so 15000-24999.
ffr::Status SlurmJobPort(const std::string& job_id, int* port);

}  // namespace ffyolo
