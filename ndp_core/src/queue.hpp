// An NVMe-style queue pair: a bounded submission ring and a bounded completion
// ring under one mutex.
//
// Bounded rings give the backpressure real queues have: a host that submits
// faster than the device drains blocks (GIL released) instead of growing
// memory, and a device whose completions are not reaped stalls. One mutex for
// both rings keeps the reasoning simple; the critical sections are a few moves.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "command.hpp"

namespace ndp {

template <class T>
class Ring {
 public:
  explicit Ring(std::size_t capacity) : slots_(capacity) {
    if (capacity == 0) throw std::invalid_argument("queue depth must be at least 1");
  }
  bool empty() const { return count_ == 0; }
  bool full() const { return count_ == slots_.size(); }
  std::size_t size() const { return count_; }
  std::size_t capacity() const { return slots_.size(); }
  void push(T&& value) {
    slots_[(head_ + count_) % slots_.size()] = std::move(value);
    ++count_;
  }
  T pop() {
    T value = std::move(slots_[head_]);
    slots_[head_] = T{};  // drop shared_ptrs held by the slot now, not at overwrite
    head_ = (head_ + 1) % slots_.size();
    --count_;
    return value;
  }

 private:
  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

struct QueuePair {
  explicit QueuePair(std::size_t depth) : sq(depth), cq(depth) {}

  std::mutex mu;
  std::condition_variable sq_not_empty;  // workers wait for commands
  std::condition_variable sq_not_full;   // submitters wait for a free slot
  std::condition_variable cq_not_empty;  // host waiters wait for completions
  std::condition_variable cq_not_full;   // workers wait for the host to reap
  Ring<Command> sq;
  Ring<Completion> cq;
  bool stopping = false;
};

}  // namespace ndp
