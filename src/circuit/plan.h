// The scheduler's host-side plan (plan.cpp): steps of gate groups split over the devices, pool
// slots per device with their reuse and spills, cross-device copies, and the dependencies
// between the resulting operations, all decided before any device work is enqueued.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/circuit/circuit.h"
#include "ember/circuit/run.h"

namespace ember::circuit::detail {

/// A group's gate: the sign of ca a + cb b + cc c + eighths / 8 after a bootstrap (cc = 0: a
/// two-input gate), or MUX (two bootstraps: s AND a, (NOT s) AND b, then their sum + 1/8, as
/// cggi::Context::mux).
struct Form {
  int ca = 0, cb = 0, eighths = 0;
  bool mux = false;
  int cc = 0;
  bool operator==(const Form& o) const {
    return ca == o.ca && cb == o.cb && eighths == o.eighths && mux == o.mux && cc == o.cc;
  }
};

/// How one gate code runs: its group's form, the free negations of its inputs and output, and
/// for a two-input gate run in a three-input form, the constant false as its third operand.
struct Lowered {
  Form form;
  bool neg_a = false, neg_b = false, neg_out = false, c_false = false;
};
/// fuse: AND(+-a, +-b) with the output maybe negated for the eight AND-type codes, XOR maybe
/// negated for xor / xnor; otherwise each code's own form (cggi's gate forms).
Lowered lower_gate(std::uint8_t code, bool fuse);

/// A piece of a location's index array (u32 literals or slots, uploaded once per location).
struct Span {
  std::size_t offset = 0, count = 0;
};

enum class OpKind : std::uint8_t {
  fetch,    // copy ciphertexts into a pool (or the outputs) from a pool or the input store
  spill,    // pool slots -> host slots
  restore,  // host slots -> pool slots
  group,    // gather the operands, linear step, key switch, blind rotation, scatter the results
};

/// One operation of the plan, issued in order. Locations 0..D-1 are the devices; location D
/// (when the home device is not one of them) holds the input store and the outputs.
struct Op {
  OpKind kind = OpKind::group;
  std::uint32_t step = 0;
  int loc = 0, stream = 0;           // where it runs (a fetch: its target)
  int src_loc = -1, src_stream = 0;  // fetch: the source
  bool from_inputs = false;          // fetch: the source is the input store
  bool to_outputs = false;           // fetch: the target is the outputs (positions, not slots)
  Form form;                         // group
  std::size_t count = 0;             // gates (group) or ciphertexts
  /// group: operand literals (slot << 1 | negate) at loc, 2 count of each for MUX (a: s then
  /// NOT s; b: a then b), c for three-input forms, out: result slots at loc. fetch: a = source
  /// literals at src_loc, out = target slots (or output positions) at loc.
  Span a, b, c, out;
  std::vector<std::uint32_t> slots, host;  // spill / restore: pool slot i <-> host slot i
  std::vector<std::uint32_t> deps;         // ops waited for, at most one per other stream
  bool signal = false;                     // a later op or the progress waits for it
};

struct Plan {
  std::size_t devices = 0, locations = 0;
  int home = 0;  // location of the home device
  int streams = 1;
  std::vector<std::vector<std::uint32_t>> index;  // per location
  std::vector<Op> ops;
  std::vector<std::size_t> pool_slots;                 // per device: slots the pool needs (peak)
  std::size_t host_slots = 0;                          // spill store
  std::vector<std::vector<std::uint32_t>> step_tails;  // per step: the last op of each stream
  std::size_t steps = 0;
  std::vector<std::size_t> gates_per_step;
  RunStats stats;  // the counts (devices, gates, launches, copies, spills, peaks)
};

/// What the plan depends on besides the circuit.
struct PlanInput {
  std::size_t devices = 1;
  int home = 0;                       // a device rank, or `devices` for an extra location
  std::vector<bool> input_present;    // per input port: false reads as zeros
  std::vector<std::size_t> capacity;  // per device: most live ciphertexts
  RunOptions options;
};

Plan make_plan(const Circuit& c, const PlanInput& in);

}  // namespace ember::circuit::detail
