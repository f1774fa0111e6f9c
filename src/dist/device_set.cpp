// DeviceSet validation and row partitions.
#include "ember/dist/device_set.h"

#include <set>
#include <string>

#include "ember/core/errors.h"

namespace ember::dist {

DeviceSet::DeviceSet(std::vector<Device> devices) : devices_(std::move(devices)) {
  if (devices_.empty()) throw ParameterError("a device set needs at least one device");
  std::set<Device> seen;
  for (const Device& d : devices_) {
    if (d.index < 0) throw ParameterError("device index " + std::to_string(d.index) + " < 0");
    if (d.kind != devices_.front().kind)
      throw ParameterError("a device set is all CPU devices or all GPUs, not both: " + str());
    if (!seen.insert(d).second)
      throw ParameterError("the device set " + str() + " names " + d.str() + " twice");
  }
}

DeviceSet DeviceSet::parse(const std::vector<std::string>& names) {
  std::vector<Device> devices;
  devices.reserve(names.size());
  for (const auto& name : names) devices.push_back(backend::parse_device(name));
  return DeviceSet(std::move(devices));
}

std::size_t DeviceSet::rank_of(const Device& d) const {
  for (std::size_t r = 0; r < devices_.size(); ++r)
    if (devices_[r] == d) return r;
  throw ParameterError(d.str() + " is not in the device set " + str());
}

std::string DeviceSet::str() const {
  std::string s = "[";
  for (std::size_t r = 0; r < devices_.size(); ++r) s += (r ? ", " : "") + devices_[r].str();
  return s + "]";
}

std::vector<RowRange> partition_rows(std::size_t rows, std::size_t parts) {
  if (parts == 0 || parts > rows)
    throw ParameterError("cannot split " + std::to_string(rows) + " rows into " +
                         std::to_string(parts) + " non-empty parts: need 1 <= parts <= rows");
  std::vector<RowRange> out(parts);
  const std::size_t base = rows / parts, extra = rows % parts;
  std::size_t at = 0;
  for (std::size_t p = 0; p < parts; ++p) {
    out[p].begin = at;
    at += base + (p < extra ? 1 : 0);
    out[p].end = at;
  }
  return out;
}

std::vector<RowRange> partition_rows(std::size_t rows, const DeviceSet& devices) {
  return partition_rows(rows, devices.size());
}

void check_partition(const std::vector<RowRange>& ranges, std::size_t rows, std::size_t parts) {
  if (ranges.size() != parts)
    throw ParameterError("a row partition over " + std::to_string(parts) + " devices has " +
                         std::to_string(parts) + " ranges, got " + std::to_string(ranges.size()));
  std::size_t at = 0;
  for (std::size_t p = 0; p < parts; ++p) {
    const RowRange& r = ranges[p];
    if (r.begin != at || r.end <= r.begin)
      throw ParameterError("row range " + std::to_string(p) + " is [" + std::to_string(r.begin) +
                           ", " + std::to_string(r.end) + "): ranges must be non-empty and start " +
                           "where the previous one ends (at " + std::to_string(at) + ")");
    at = r.end;
  }
  if (at != rows)
    throw ParameterError("the row ranges cover [0, " + std::to_string(at) +
                         ") but the polynomial has " + std::to_string(rows) + " rows");
}

}  // namespace ember::dist
