// The circuit IR: a netlist of CGGI gates over AIGER-style literals, its levels (waves) and
// statistics; the same numbering and arrays as python/ember/circuit.py.
//
// Node 0 is the constant false, nodes 1..I the input bits (each input's bits LSB first, inputs
// in declaration order), node I+1+g the output of gate g; literal 2 node + neg names a node or
// its negation (NOT is free). A two-input gate stores its truth table (bit a + 2 b of the code is
// the output for inputs a, b) on non-negated inputs; MUX (code 16) is s ? a : b; the three-input
// gates MAJ (17, the majority: a full adder's carry) and XOR3 (18, a ^ b ^ c: its sum) cost one
// bootstrap each and read their literals as stored (negations included).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember::circuit {

inline constexpr std::uint8_t kMux = 16;
inline constexpr std::uint8_t kMaj = 17;
inline constexpr std::uint8_t kXor3 = 18;
/// One past the largest gate code.
inline constexpr std::uint8_t kNumCodes = 19;

/// The truth table of a two-input gate with its inputs negated as given (Python's _swap_table).
std::uint8_t swap_table(std::uint8_t code, bool neg_a, bool neg_b);
/// "and", "nand", ..., "mux", "maj", "xor3" for the thirteen codes a circuit may hold; "" for any
/// other.
const char* gate_name(std::uint8_t code);
/// Bootstraps one gate of `code` costs: 2 for MUX, else 1.
inline int gate_bootstraps(std::uint8_t code) { return code == kMux ? 2 : 1; }

/// A named input or output: `count` elements (the product of its C shape) of `width` bits.
struct Port {
  std::string name;
  int width = 1;
  bool is_signed = false;
  std::size_t count = 1;
  std::size_t nbits() const { return count * static_cast<std::size_t>(width); }
};

/// What stats() reports (the Python dict of Circuit.stats()).
struct Stats {
  std::size_t gates = 0, bootstraps = 0, depth = 0, widest_wave = 0, widest_wave_bootstraps = 0;
  std::size_t input_bits = 0, output_bits = 0;
  std::vector<std::size_t> gates_by_code = std::vector<std::size_t>(kNumCodes, 0);
};

/// A validated circuit: gates in topological order. Immutable once made; levels are computed in
/// the constructor (one pass over the gates).
class Circuit {
 public:
  /// ops [G] (a gate code each), args [G x 3] row-major (literals a, b and the third: MUX's
  /// select or the third input of MAJ and XOR3; unread for two-input gates),
  /// out_lits [sum of the outputs' bits]. Throws ParameterError naming the first problem: an
  /// unknown gate code, a literal that reads a later node (not topological), an output literal
  /// out of range, outputs that do not match their ports, a port of width outside [1, 64].
  Circuit(std::vector<Port> inputs, std::vector<Port> outputs, std::vector<std::uint8_t> ops,
          std::vector<std::int64_t> args, std::vector<std::int64_t> out_lits);

  const std::vector<Port>& inputs() const { return inputs_; }
  const std::vector<Port>& outputs() const { return outputs_; }
  std::size_t num_gates() const { return ops_.size(); }
  std::size_t num_input_bits() const { return input_bits_; }
  std::size_t num_nodes() const { return 1 + input_bits_ + ops_.size(); }
  /// Node of gate g's output.
  std::size_t gate_node(std::size_t g) const { return 1 + input_bits_ + g; }
  std::uint8_t op(std::size_t g) const { return ops_[g]; }
  /// Literal k (0: a, 1: b, 2: the MUX select or the third input) of gate g.
  std::int64_t arg(std::size_t g, int k) const { return args_[3 * g + k]; }
  /// Number of operands gate g reads: 3 for MUX, MAJ and XOR3, else 2.
  int arity(std::size_t g) const { return ops_[g] >= kMux ? 3 : 2; }
  const std::vector<std::int64_t>& out_lits() const { return out_lits_; }

  /// Level of every gate (ARCTYREX Algorithm 1): 1 + the largest level of its inputs; inputs,
  /// constants and NOTs (flipped literals) sit at the level of what they read (0 for inputs).
  const std::vector<std::int32_t>& levels() const { return levels_; }
  /// Number of levels (waves); 0 without gates.
  std::size_t depth() const { return depth_; }
  /// Gate indices grouped by level, each wave in gate order: wave w holds the gates of level w+1.
  std::vector<std::vector<std::uint32_t>> waves() const;
  Stats stats() const;

 private:
  std::vector<Port> inputs_, outputs_;
  std::vector<std::uint8_t> ops_;
  std::vector<std::int64_t> args_, out_lits_;
  std::size_t input_bits_ = 0;
  std::vector<std::int32_t> levels_;
  std::size_t depth_ = 0;
};

}  // namespace ember::circuit
