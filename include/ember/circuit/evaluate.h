// Plaintext evaluation of a circuit, bit-sliced: 64 input sets per 64-bit word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/circuit/circuit.h"

namespace ember::circuit {

/// The circuit on `words` words of input sets: in[i * words + w] holds bit i (node i + 1) of
/// the 64 sets of word w, one set per bit position. Returns the output bits the same way,
/// [out_lits().size() x words]. Throws ParameterError when `in` does not hold
/// num_input_bits() x words words.
std::vector<std::uint64_t> evaluate(const Circuit& c, const std::vector<std::uint64_t>& in,
                                    std::size_t words);
/// The same from a pointer (the caller's array of num_input_bits() x words words).
std::vector<std::uint64_t> evaluate(const Circuit& c, const std::uint64_t* in, std::size_t words);

}  // namespace ember::circuit
