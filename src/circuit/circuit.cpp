// The circuit IR: validation, levelization (ARCTYREX Algorithm 1), waves and statistics.
#include "ember/circuit/circuit.h"

#include <algorithm>
#include <string>

#include "ember/core/errors.h"

namespace ember::circuit {

std::uint8_t swap_table(std::uint8_t code, bool neg_a, bool neg_b) {
  std::uint8_t out = 0;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      if ((code >> ((a ^ neg_a) + 2 * (b ^ neg_b))) & 1) out |= std::uint8_t(1u << (a + 2 * b));
  return out;
}

const char* gate_name(std::uint8_t code) {
  switch (code) {
    case 8:
      return "and";
    case 7:
      return "nand";
    case 14:
      return "or";
    case 1:
      return "nor";
    case 6:
      return "xor";
    case 9:
      return "xnor";
    case 4:
      return "andny";
    case 2:
      return "andyn";
    case 13:
      return "orny";
    case 11:
      return "oryn";
    case kMux:
      return "mux";
    case kMaj:
      return "maj";
    case kXor3:
      return "xor3";
    default:
      return "";
  }
}

Circuit::Circuit(std::vector<Port> inputs, std::vector<Port> outputs, std::vector<std::uint8_t> ops,
                 std::vector<std::int64_t> args, std::vector<std::int64_t> out_lits)
    : inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      ops_(std::move(ops)),
      args_(std::move(args)),
      out_lits_(std::move(out_lits)) {
  const std::size_t g = ops_.size();
  if (args_.size() != 3 * g)
    throw ParameterError("circuit: " + std::to_string(g) + " gates need " + std::to_string(3 * g) +
                         " argument literals, got " + std::to_string(args_.size()));
  std::size_t out_bits = 0;
  for (const auto* ports : {&inputs_, &outputs_})
    for (const Port& p : *ports) {
      if (p.width < 1 || p.width > 64 || p.count == 0)
        throw ParameterError("circuit port '" + p.name + "' has width " + std::to_string(p.width) +
                             " and " + std::to_string(p.count) +
                             " elements: widths are 1 to 64, at least one element");
      if (ports == &inputs_)
        input_bits_ += p.nbits();
      else
        out_bits += p.nbits();
    }
  if (out_bits != out_lits_.size())
    throw ParameterError("circuit: the output ports hold " + std::to_string(out_bits) +
                         " bits but there are " + std::to_string(out_lits_.size()) +
                         " output literals");
  const std::int64_t base = static_cast<std::int64_t>(1 + input_bits_);
  levels_.resize(g);
  // Node levels: inputs and the constant at 0, each gate 1 + the largest level it reads.
  std::vector<std::int32_t> node_level(num_nodes(), 0);
  for (std::size_t i = 0; i < g; ++i) {
    if (ops_[i] >= kNumCodes || gate_name(ops_[i])[0] == '\0')
      throw ParameterError("circuit gate " + std::to_string(i) + " has the unknown code " +
                           std::to_string(ops_[i]));
    const std::int64_t own = 2 * (base + static_cast<std::int64_t>(i));
    std::int32_t m = 0;
    for (int k = 0; k < arity(i); ++k) {
      const std::int64_t lit = args_[3 * i + k];
      if (lit < 0 || lit >= own)
        throw ParameterError("circuit gate " + std::to_string(i) + " reads literal " +
                             std::to_string(lit) +
                             ": gates must be in topological order (read only earlier nodes)");
      m = std::max(m, node_level[lit >> 1]);
    }
    levels_[i] = node_level[base + i] = m + 1;
    depth_ = std::max<std::size_t>(depth_, m + 1);
  }
  const std::int64_t lits = 2 * static_cast<std::int64_t>(num_nodes());
  for (std::int64_t lit : out_lits_)
    if (lit < 0 || lit >= lits)
      throw ParameterError("circuit output literal " + std::to_string(lit) + " is out of range");
}

std::vector<std::vector<std::uint32_t>> Circuit::waves() const {
  std::vector<std::vector<std::uint32_t>> out(depth_);
  for (std::size_t i = 0; i < ops_.size(); ++i)
    out[levels_[i] - 1].push_back(static_cast<std::uint32_t>(i));
  return out;
}

Stats Circuit::stats() const {
  Stats s;
  s.gates = ops_.size();
  s.depth = depth_;
  s.input_bits = input_bits_;
  s.output_bits = out_lits_.size();
  std::vector<std::size_t> width(depth_, 0), boots(depth_, 0);
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    ++s.gates_by_code[ops_[i]];
    s.bootstraps += gate_bootstraps(ops_[i]);
    ++width[levels_[i] - 1];
    boots[levels_[i] - 1] += gate_bootstraps(ops_[i]);
  }
  for (std::size_t w = 0; w < depth_; ++w) {
    s.widest_wave = std::max(s.widest_wave, width[w]);
    s.widest_wave_bootstraps = std::max(s.widest_wave_bootstraps, boots[w]);
  }
  return s;
}

}  // namespace ember::circuit
