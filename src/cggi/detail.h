// Internal helpers of the cggi layer: torus-word dispatch, encodings and host copies.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/backend/cggi_rows.h"
#include "ember/cggi/context.h"
#include "ember/core/errors.h"

namespace ember::cggi::detail {

using backend::with_torus;

/// 1/8 (the gate encoding of true) on the 2^bits scale.
inline std::uint64_t mu(int torus_bits) { return std::uint64_t{1} << (torus_bits - 3); }
/// The scale of an integer message of `message_bits` bits with a padding bit.
inline std::uint64_t delta(int torus_bits, int message_bits) {
  return std::uint64_t{1} << (torus_bits - message_bits - 1);
}

/// Host copy of `count` T words of backend memory.
template <class T>
std::vector<T> download(backend::Backend& be, const void* src, std::size_t count) {
  std::vector<T> out(count);
  be.copy_to_host_async(out.data(), src, count * sizeof(T), backend::Stream{});
  be.synchronize(backend::Stream{});
  return out;
}

}  // namespace ember::cggi::detail
