// Whose a folder is, before a writer (yolo-pack, yolo-synth) writes into it: a
// writer's --force replaces only what the writer wrote, so a folder holding
// files but none of the writer's own (its state file, its manifest or record)
// is someone else's, refused with --force or without, before anything is
// written into it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ffr/env.h"
#include "ffr/status.h"

namespace ffyolo {

// The refusal of `dir`, listed as `entries`: it holds files that are not
// `what` ("a packed dataset nor an unfinished pack"); AlreadyExists naming up
// to five of them.
ffr::Status ForeignFolder(const std::string& dir, const std::vector<std::string>& entries, const std::string& what);

// OK when `dir` is missing, empty, or a folder holding a file `is_own` accepts
// (a name in it); a folder of other files is a ForeignFolder, anything else at
// `dir` refused as no folder. `entries` gets dir's entries (none when missing).
ffr::Status CheckOwnFolder(ffr::Env* env, const std::string& dir, const std::function<bool(const std::string&)>& is_own,
                           const std::string& what, std::vector<std::string>* entries);

}  // namespace ffyolo
