// Tests of the circuit layer on the CPU backend: IR validation and levels, the bit-sliced
// evaluator against a one-set-at-a-time reference, and the encrypted scheduler on random
// circuits (decrypts to the evaluator's outputs; the same words on one and two devices, in wave
// and dataflow mode, and with a pool small enough to spill).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ember/cggi/context.h"
#include "ember/circuit/circuit.h"
#include "ember/circuit/evaluate.h"
#include "ember/circuit/run.h"
#include "ember/core/errors.h"

namespace {

using namespace ember;
using namespace ember::circuit;

const std::uint8_t kCodes[] = {8, 7, 14, 1, 6, 9, 4, 2, 13, 11, kMux, kMaj, kXor3};

/// A random circuit: two inputs of `bits` bits, `gates` gates over earlier nodes (negated
/// literals, the constants, MUX, MAJ and XOR3 included), two outputs.
Circuit random_circuit(std::mt19937_64& rng, int bits, std::size_t gates) {
  const std::size_t base = 1 + 2 * static_cast<std::size_t>(bits);
  std::vector<std::uint8_t> ops;
  std::vector<std::int64_t> args;
  for (std::size_t g = 0; g < gates; ++g) {
    const std::uint8_t code = kCodes[rng() % std::size(kCodes)];
    ops.push_back(code);
    // Mostly recent nodes: deeper circuits than uniform picks give.
    auto pick = [&] {
      const std::size_t top = base + g;
      const std::size_t lo = top > 24 && rng() % 4 ? top - 24 : 0;
      return static_cast<std::int64_t>(2 * (lo + rng() % (top - lo)) + rng() % 2);
    };
    const std::int64_t a = pick(), b = pick();
    args.insert(args.end(), {a, b, code >= kMux ? pick() : 0});
  }
  std::vector<std::int64_t> outs;
  const std::int64_t nodes = static_cast<std::int64_t>(base + gates);
  for (int i = 0; i < 2 * bits; ++i)
    outs.push_back(2 * (nodes - 1 - static_cast<std::int64_t>(rng() % (gates / 2))) + rng() % 2);
  outs[0] = 1;  // the constant true
  outs[1] = 2;  // an input bit
  return Circuit({{"a", bits, false, 1}, {"b", bits, true, 1}},
                 {{"x", bits, false, 1}, {"y", bits, true, 1}}, std::move(ops), std::move(args),
                 std::move(outs));
}

/// One input set (bits in node order), one gate at a time.
std::vector<std::uint8_t> reference(const Circuit& c, const std::vector<std::uint8_t>& in) {
  std::vector<std::uint8_t> v(c.num_nodes(), 0);
  for (std::size_t i = 0; i < in.size(); ++i) v[1 + i] = in[i];
  auto val = [&](std::int64_t lit) { return static_cast<std::uint8_t>(v[lit >> 1] ^ (lit & 1)); };
  for (std::size_t g = 0; g < c.num_gates(); ++g) {
    const int a = val(c.arg(g, 0)), b = val(c.arg(g, 1)),
              s = c.arity(g) == 3 ? val(c.arg(g, 2)) : 0;
    switch (c.op(g)) {
      case kMux:
        v[c.gate_node(g)] = s ? a : b;
        break;
      case kMaj:
        v[c.gate_node(g)] = a + b + s >= 2;
        break;
      case kXor3:
        v[c.gate_node(g)] = a ^ b ^ s;
        break;
      default:
        v[c.gate_node(g)] = (c.op(g) >> (a + 2 * b)) & 1;
    }
  }
  std::vector<std::uint8_t> out;
  for (std::int64_t lit : c.out_lits()) out.push_back(val(lit));
  return out;
}

TEST(CircuitIr, ValidatesAndLevels) {
  // g0 = a0 AND b0 (level 1), g1 = NOT g0 XOR a1 (2), g2 = mux(g1, g0, 1) (3).
  const std::vector<Port> in = {{"a", 2, false, 1}, {"b", 1, false, 1}};
  Circuit c(in, {{"o", 1, false, 1}}, {8, 6, kMux}, {2, 6, 0, 9, 4, 0, 8, 1, 10}, {12});
  EXPECT_EQ(c.num_nodes(), 7u);
  EXPECT_EQ(c.levels(), (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(c.depth(), 3u);
  EXPECT_EQ(c.waves().size(), 3u);
  const Stats s = c.stats();
  EXPECT_EQ(s.bootstraps, 4u);
  EXPECT_EQ(s.widest_wave, 1u);
  EXPECT_EQ(s.gates_by_code[kMux], 1u);
  EXPECT_THROW(Circuit(in, {{"o", 1, false, 1}}, {8}, {2, 8, 0}, {8}),
               ParameterError);  // reads itself
  EXPECT_THROW(Circuit(in, {{"o", 1, false, 1}}, {3}, {2, 4, 0}, {8}), ParameterError);   // code 3
  EXPECT_THROW(Circuit(in, {{"o", 2, false, 1}}, {8}, {2, 4, 0}, {8}), ParameterError);   // 2 bits
  EXPECT_THROW(Circuit(in, {{"o", 1, false, 1}}, {8}, {2, 4, 0}, {10}), ParameterError);  // range
  EXPECT_THROW(Circuit(in, {{"o", 1, false, 1}}, {8}, {2, 4}, {8}), ParameterError);      // args
}

TEST(CircuitEvaluate, MatchesOneSetAtATime) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 4; ++round) {
    const Circuit c = random_circuit(rng, 6, 300);
    const std::size_t words = 3, sets = 64 * words - 5;
    std::vector<std::uint64_t> in(c.num_input_bits() * words);
    for (auto& w : in) w = rng();
    const auto out = evaluate(c, in, words);
    for (std::size_t s = 0; s < sets; s += 7) {
      std::vector<std::uint8_t> bits;
      for (std::size_t i = 0; i < c.num_input_bits(); ++i)
        bits.push_back((in[i * words + s / 64] >> (s % 64)) & 1);
      const auto want = reference(c, bits);
      for (std::size_t o = 0; o < want.size(); ++o)
        ASSERT_EQ((out[o * words + s / 64] >> (s % 64)) & 1, want[o]) << round << " " << s;
    }
  }
  EXPECT_THROW(evaluate(random_circuit(rng, 2, 20), std::vector<std::uint64_t>(3), 1),
               ParameterError);
}

struct Kit {
  cggi::Context ctx;
  cggi::ClientKey ck;
  cggi::ServerKey sk;
};

class CircuitRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto p = cggi::Params::preset("test_insecure");
    home_ = new Kit{cggi::Context(p, backend::Device{}), {}, {}};
    home_->ck = home_->ctx.keygen();
    home_->sk = home_->ctx.server_key(home_->ck);
    other_ = new Kit{cggi::Context(p, backend::Device{backend::DeviceKind::cpu, 1}), {}, {}};
    other_->sk = home_->sk.to(other_->ctx.device());
  }
  static void TearDownTestSuite() {
    delete other_;
    delete home_;
  }
  static std::vector<DeviceKit> kits(int n) {
    std::vector<DeviceKit> k = {{&home_->ctx, &home_->sk}};
    if (n > 1) k.push_back({&other_->ctx, &other_->sk});
    return k;
  }
  static std::vector<std::uint64_t> words(const RunResult& r) {
    std::vector<std::uint64_t> w;
    for (const auto& b : r.outputs) {
      auto h = b.to_host();
      w.insert(w.end(), h.begin(), h.end());
    }
    return w;
  }
  static Kit* home_;
  static Kit* other_;
};
Kit* CircuitRun::home_ = nullptr;
Kit* CircuitRun::other_ = nullptr;

TEST_F(CircuitRun, DevicesModesAndSpillGiveTheSameWords) {
  std::mt19937_64 rng(11);
  const Circuit c = random_circuit(rng, 4, 80);
  cggi::Context& ctx = home_->ctx;
  std::vector<std::uint8_t> a = {1, 0, 1, 1}, b = {0, 1, 1, 0};
  const std::vector<cggi::LweBatch> ins = {ctx.encrypt_bits(a, home_->ck),
                                           ctx.encrypt_bits(b, home_->ck)};
  RunOptions opt;
  opt.mode = Mode::wave;  // dataflow (the default) below
  std::size_t progress_calls = 0;
  opt.progress = [&](const Progress& p) {
    ++progress_calls;
    EXPECT_LE(p.steps_done, p.steps);
  };
  const RunResult one = run(c, ctx, ins, kits(1), opt);
  EXPECT_EQ(progress_calls, c.depth());
  EXPECT_EQ(one.stats.gates, c.num_gates());
  EXPECT_EQ(one.stats.steps, c.depth());
  EXPECT_EQ(one.stats.cross_device_copies, 0u);
  // Decrypts to the plaintext evaluation.
  std::vector<std::uint8_t> in_bits = a;
  in_bits.insert(in_bits.end(), b.begin(), b.end());
  const auto want = reference(c, in_bits);
  std::vector<std::uint8_t> got;
  for (const auto& o : one.outputs) {
    const auto d = ctx.decrypt_bits(o, home_->ck);
    got.insert(got.end(), d.begin(), d.end());
  }
  EXPECT_EQ(got, want);
  const auto w1 = words(one);

  opt.progress = nullptr;
  const RunResult two = run(c, ctx, ins, kits(2), opt);
  EXPECT_EQ(words(two), w1);
  EXPECT_GT(two.stats.gates_per_device[1], 0u);
  EXPECT_GT(two.stats.cross_device_copies, 0u);
  RunOptions plain = opt;
  plain.locality = false;
  const RunResult spread = run(c, ctx, ins, kits(2), plain);
  EXPECT_EQ(words(spread), w1);

  RunOptions flow = opt;
  flow.mode = Mode::dataflow;
  flow.dataflow_min_batch = 16;
  EXPECT_EQ(words(run(c, ctx, ins, kits(2), flow)), w1);

  RunOptions tight = opt;
  tight.max_live_ciphertexts = 8;
  const RunResult spilled = run(c, ctx, ins, kits(2), tight);
  EXPECT_EQ(words(spilled), w1);
  EXPECT_GT(spilled.stats.spilled, 0u);
  EXPECT_GT(spilled.stats.restored, 0u);
  EXPECT_LE(spilled.stats.peak_live_per_device[0], 8u);

  // The home device need not compute: the inputs and outputs move.
  const RunResult away = run(c, ctx, ins, {{&other_->ctx, &other_->sk}}, opt);
  EXPECT_EQ(words(away), w1);

  RunOptions unfused = opt;
  unfused.fuse = false;
  const RunResult u = run(c, ctx, ins, kits(1), unfused);
  EXPECT_GE(u.stats.launches, one.stats.launches);
  for (std::size_t i = 0; i < u.outputs.size(); ++i)
    EXPECT_EQ(ctx.decrypt_bits(u.outputs[i], home_->ck),
              ctx.decrypt_bits(one.outputs[i], home_->ck));
}

TEST_F(CircuitRun, RejectsBadInputsAndOptions) {
  std::mt19937_64 rng(3);
  const Circuit c = random_circuit(rng, 3, 30);
  cggi::Context& ctx = home_->ctx;
  const auto ok = ctx.encrypt_bits({1, 0, 1}, home_->ck);
  const auto short_ = ctx.encrypt_bits({1, 0}, home_->ck);
  EXPECT_THROW(run(c, ctx, {ok, short_}, kits(1)), ParameterError);
  EXPECT_THROW(run(c, ctx, {ok}, kits(1)), ParameterError);
  EXPECT_THROW(run(c, ctx, {ok, ok.to(other_->ctx.device())}, kits(1)), MismatchError);
  EXPECT_THROW(run(c, ctx, {ok, ok}, {{&other_->ctx, &home_->sk}}), MismatchError);
  EXPECT_THROW(run(c, ctx, {ok, ok}, {kits(1)[0], kits(1)[0]}), ParameterError);
  RunOptions bad;
  bad.max_live_ciphertexts = 3;
  EXPECT_THROW(run(c, ctx, {ok, ok}, kits(1), bad), ParameterError);
  EXPECT_THROW(parse_mode("waves"), ParameterError);
  // An absent input reads as zeros.
  const RunResult r = run(c, ctx, {ok, cggi::LweBatch{}}, kits(1));
  EXPECT_EQ(r.outputs.size(), 2u);
}

}  // namespace
