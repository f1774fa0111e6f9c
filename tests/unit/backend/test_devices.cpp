// CPU devices as separate backends, copies between devices, and stream identity.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ember/backend/backend.h"
#include "ember/backend/buffer.h"
#include "ember/backend/stream_join.h"
#include "ember/core/errors.h"
#include "ember/ring/rns_poly.h"

namespace {

using ember::u64;
using ember::backend::Backend;
using ember::backend::backend_for;
using ember::backend::Buffer;
using ember::backend::Device;
using ember::backend::DeviceKind;
using ember::backend::Stream;

Device cpu(int index) { return Device{DeviceKind::cpu, index}; }

TEST(CpuDevices, AreSeparateBackendsWithTheirNames) {
  Backend& a = backend_for(cpu(0));
  Backend& b = backend_for(cpu(1));
  EXPECT_NE(&a, &b);
  EXPECT_EQ(&b, &backend_for(cpu(1)));
  EXPECT_EQ(b.device().str(), "cpu:1");
  EXPECT_EQ(a.device().str(), "cpu");
  EXPECT_EQ(ember::backend::parse_device("cpu:7").index, 7);
  EXPECT_THROW(ember::backend::parse_device("cpu:64"), ember::ParameterError);
  EXPECT_THROW(backend_for(cpu(64)), ember::DeviceError);
}

TEST(CpuDevices, CopyBetweenDevicesKeepsTheBytes) {
  Backend& src = backend_for(cpu(2));
  Backend& dst = backend_for(cpu(3));
  std::vector<u64> words(1000);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = i * 0x9E3779B97F4A7C15ull;
  Buffer from = Buffer::from_host(src, words.data(), words.size() * sizeof(u64), Stream{});
  Buffer to(dst, words.size() * sizeof(u64), Stream{});
  ember::backend::copy_between_devices(dst, to.as<void>(), Stream{}, src, from.as<const void>(),
                                       Stream{}, words.size() * sizeof(u64));
  EXPECT_EQ(std::memcmp(to.as<const u64>(), words.data(), words.size() * sizeof(u64)), 0);
}

TEST(CpuDevices, PolynomialsMoveWithTheirBasis) {
  auto ring = ember::ring::RingContext::create(64, {65537, 114689});
  const auto basis = ember::ring::RnsBasis::all(ring);
  std::vector<u64> words(2 * 64);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = (i * 7919) % 65537;
  const auto p =
      ember::ring::RnsPoly::from_host(basis, ember::ring::Form::coeff, cpu(0), words.data());
  const auto q = p.to(cpu(1));
  EXPECT_EQ(q.device(), cpu(1));
  EXPECT_TRUE(q.basis() == p.basis());
  EXPECT_EQ(q.to_host(), words);
  EXPECT_THROW(p.add(q), ember::MismatchError);  // another device: moved explicitly only
  EXPECT_EQ(q.ntt().to(cpu(0)).to_host(), p.ntt().to_host());
}

TEST(Streams, TheNullStreamIsTheDefaultOne) {
  Backend& be = backend_for(cpu(0));
  EXPECT_TRUE(ember::backend::same_stream(be, Stream{}, be.default_stream()));
  const Stream s = be.create_stream();
  EXPECT_TRUE(ember::backend::same_stream(be, s, Stream{}));  // the CPU has one queue
  { const ember::backend::StreamJoin join(be, s, {Stream{}, be.default_stream()}); }
  be.destroy_stream(s);
}

}  // namespace
