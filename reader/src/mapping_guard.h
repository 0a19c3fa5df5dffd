// Mapping guards: keep a shard that shrinks under the mmap backend from
// killing the process.
//
// Touching a mapped page past a file's new end raises SIGBUS. A process-wide
// handler (installed with the first guard, chaining to the handler it finds)
// takes a fault inside a guarded mapping by putting a page of zeros where the
// file's page was, so the access completes, and marks the mapping as shrunk;
// the reader then refuses the shard. Faults anywhere else go on to the
// previous handler (by default: the process dies of SIGBUS, as before).
#pragma once

#include <cstdint>

namespace ffr::internal {

// Guards [addr, addr + size); -1 when every guard slot is in use.
int GuardMapping(const void* addr, uint64_t size);
// Before the mapping is unmapped.
void UnguardMapping(int guard);
// Whether a page of the mapping was found gone (and is zeros from then on).
bool MappingShrank(int guard);

}  // namespace ffr::internal
