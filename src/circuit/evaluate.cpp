// Bit-sliced plaintext evaluation: the gates in order over blocks of 512 input sets (8 words),
// node values in a few slots reused after each node's last reader, blocks in parallel.
#include "ember/circuit/evaluate.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "ember/core/errors.h"

namespace ember::circuit {

namespace {

constexpr std::size_t kBlock = 8;  // words per pass: a fixed trip count the compiler vectorizes
using Word = std::uint64_t;
using Lanes = std::array<Word, kBlock>;

/// Where each node's value lives during a pass: slots reused after a node's last reader, so the
/// working set is the circuit's widest cut instead of every node (cache-resident passes).
struct SlotMap {
  std::vector<std::uint32_t> slot;  // per node
  std::size_t slots = 0;
};

SlotMap assign_slots(const Circuit& c) {
  const std::size_t nodes = c.num_nodes(), gates = c.num_gates(), base = 1 + c.num_input_bits();
  constexpr std::size_t kForever = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> last(nodes, 0);  // index of the last gate reading the node
  for (std::size_t g = 0; g < gates; ++g)
    for (int k = 0; k < c.arity(g); ++k) last[c.arg(g, k) >> 1] = g;
  for (std::int64_t lit : c.out_lits()) last[lit >> 1] = kForever;
  last[0] = kForever;
  SlotMap m;
  m.slot.assign(nodes, 0);
  std::vector<std::uint32_t> free;
  auto take = [&] {
    if (!free.empty()) {
      const std::uint32_t s = free.back();
      free.pop_back();
      return s;
    }
    return static_cast<std::uint32_t>(m.slots++);
  };
  for (std::size_t n = 0; n < base; ++n) m.slot[n] = take();
  for (std::size_t g = 0; g < gates; ++g) {
    const std::size_t node = base + g;
    m.slot[node] = take();
    // Operands read for the last time free their slots after this gate; the output slot was
    // taken first, so a gate never writes over its own operands mid-pass.
    for (int k = 0; k < c.arity(g); ++k) {
      const std::size_t in = c.arg(g, k) >> 1;
      if (last[in] == g) {
        last[in] = kForever - 1;  // free once even when read twice
        free.push_back(m.slot[in]);
      }
    }
    if (last[node] == 0 && node != 0) free.push_back(m.slot[node]);  // nobody reads it
  }
  return m;
}

inline Word mask(bool bit) { return bit ? ~Word{0} : Word{0}; }

}  // namespace

std::vector<std::uint64_t> evaluate(const Circuit& c, const std::vector<std::uint64_t>& in,
                                    std::size_t words) {
  if (in.size() != c.num_input_bits() * words)
    throw ParameterError("evaluate: expected " + std::to_string(c.num_input_bits()) + " x " +
                         std::to_string(words) + " input words, got " + std::to_string(in.size()));
  return evaluate(c, in.data(), words);
}

std::vector<std::uint64_t> evaluate(const Circuit& c, const std::uint64_t* in, std::size_t words) {
  const SlotMap map = assign_slots(c);
  const std::size_t inputs = c.num_input_bits(), base = 1 + inputs, gates = c.num_gates();
  const auto& outs = c.out_lits();
  std::vector<Word> result(outs.size() * words);
  const long blocks = static_cast<long>((words + kBlock - 1) / kBlock);
#pragma omp parallel if (blocks > 1)
  {
    std::vector<Lanes> v(std::max<std::size_t>(map.slots, 1));
#pragma omp for schedule(static)
    for (long blk = 0; blk < blocks; ++blk) {
      const std::size_t w0 = blk * kBlock, n = std::min(kBlock, words - w0);
      v[map.slot[0]].fill(0);
      for (std::size_t i = 0; i < inputs; ++i) {
        Lanes& dst = v[map.slot[1 + i]];
        dst.fill(0);
        std::copy_n(in + i * words + w0, n, dst.begin());
      }
      for (std::size_t g = 0; g < gates; ++g) {
        const std::int64_t la = c.arg(g, 0), lb = c.arg(g, 1);
        const Lanes& a = v[map.slot[la >> 1]];
        const Lanes& b = v[map.slot[lb >> 1]];
        const Word na = mask(la & 1), nb = mask(lb & 1);
        Lanes& out = v[map.slot[base + g]];
        const std::uint8_t code = c.op(g);
        if (code >= kMux) {
          const std::int64_t ls = c.arg(g, 2);
          const Lanes& s = v[map.slot[ls >> 1]];
          const Word ns = mask(ls & 1);
          if (code == kMux) {
            for (std::size_t k = 0; k < kBlock; ++k) {
              const Word sv = s[k] ^ ns;
              out[k] = (sv & (a[k] ^ na)) | (~sv & (b[k] ^ nb));
            }
          } else if (code == kMaj) {
            for (std::size_t k = 0; k < kBlock; ++k) {
              const Word x = a[k] ^ na, y = b[k] ^ nb, z = s[k] ^ ns;
              out[k] = (x & y) | (x & z) | (y & z);
            }
          } else {
            for (std::size_t k = 0; k < kBlock; ++k) out[k] = a[k] ^ na ^ b[k] ^ nb ^ s[k] ^ ns;
          }
        } else {
          const Word t0 = mask(code & 1), t1 = mask(code & 2), t2 = mask(code & 4),
                     t3 = mask(code & 8);
          for (std::size_t k = 0; k < kBlock; ++k) {
            const Word x = a[k] ^ na, y = b[k] ^ nb;
            out[k] = (t0 & ~x & ~y) | (t1 & x & ~y) | (t2 & ~x & y) | (t3 & x & y);
          }
        }
      }
      for (std::size_t o = 0; o < outs.size(); ++o) {
        const Lanes& src = v[map.slot[outs[o] >> 1]];
        const Word neg = mask(outs[o] & 1);
        for (std::size_t k = 0; k < n; ++k) result[o * words + w0 + k] = src[k] ^ neg;
      }
    }
  }
  return result;
}

}  // namespace ember::circuit
