// Helpers the benchmark bindings share: medians and distinct NTT primes of given sizes.
#pragma once

#include <algorithm>
#include <vector>

#include "ember/core/numtheory.h"

namespace ember::bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size() / 2;
  return v.size() % 2 ? v[k] : 0.5 * (v[k - 1] + v[k]);
}

/// Distinct NTT primes for a list of bit sizes (none repeated, none in `used`; appended to it).
inline std::vector<u64> primes_for(const std::vector<int>& bits, std::size_t n,
                                   std::vector<u64>& used) {
  std::vector<u64> out;
  for (int b : bits) {
    const u64 p = generate_ntt_primes(b, n, 1, used)[0];
    used.push_back(p);
    out.push_back(p);
  }
  return out;
}

}  // namespace ember::bench
