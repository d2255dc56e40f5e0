// FNV-1a, 64 bits: a hash that is the same in every process and on every run (absl::Hash is
// not), for values written to the API server and compared after a restart.
#pragma once

#include <cstdint>
#include <string_view>

namespace phalanx {

inline uint64_t Fnv1a64(std::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

}  // namespace phalanx
