// StreamJoin: orders the work of one stream after that of other streams of the same device.
#pragma once

#include <initializer_list>
#include <vector>

#include "ember/backend/backend.h"

namespace ember::backend {

/// Two streams of `be` that are the same queue (the null Stream is the default stream).
inline bool same_stream(Backend& be, Stream a, Stream b) {
  if (a.handle == b.handle) return true;
  const void* d = be.default_stream().handle;
  return (a.handle ? a.handle : d) == (b.handle ? b.handle : d);
}

/// Work queued on `later` from now on waits for the work queued so far on `earlier` (one way:
/// `earlier` is not held back by `later`). Streams of the same device.
inline void wait_for(Backend& be, Stream later, Stream earlier) {
  if (same_stream(be, later, earlier)) return;
  Event e = be.create_event();
  be.record_event(e, earlier);
  be.wait_event(later, e);
  be.destroy_event(e);
}

/// For an operation queued on stream `on` that reads data written on `others`: work queued on
/// `on` after the constructor waits for the work queued so far on each other stream, and when
/// the join ends each other stream waits for the work queued on `on` meanwhile (so that a later
/// stream-ordered release of an operand on its own stream cannot overtake the operation).
/// Streams equal to `on` cost nothing; on the CPU every stream is the same.
class StreamJoin {
 public:
  StreamJoin(Backend& be, Stream on, std::initializer_list<Stream> others) : be_(be), on_(on) {
    for (Stream o : others) join(o);
  }
  StreamJoin(Backend& be, Stream on, const std::vector<Stream>& others) : be_(be), on_(on) {
    for (Stream o : others) join(o);
  }
  ~StreamJoin() {
    for (Stream o : others_) {
      try {
        wait_for(be_, o, on_);
      } catch (...) {  // a failing device reports on its next call; a destructor must not throw
      }
    }
  }
  StreamJoin(const StreamJoin&) = delete;
  StreamJoin& operator=(const StreamJoin&) = delete;

 private:
  void join(Stream o) {
    if (same_stream(be_, o, on_)) return;
    for (Stream seen : others_)
      if (same_stream(be_, o, seen)) return;
    wait_for(be_, on_, o);
    others_.push_back(o);
  }
  Backend& be_;
  Stream on_;
  std::vector<Stream> others_;
};

}  // namespace ember::backend
