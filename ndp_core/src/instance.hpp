// An instance: one installed StorageApp with its private state and the
// streams it was given (Morpheus MINIT).
//
// Commands of one instance run one at a time and in submission order: each
// gets a ticket when it enters the submission queue, and a worker runs it only
// when the instance is serving that ticket. That keeps the app's state free of
// races and makes results independent of which worker picked what. It cannot
// deadlock: the submission queue is FIFO and tickets are handed out in queue
// order, so the command holding the lowest outstanding ticket has always been
// picked up by a worker that is free to run it.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <vector>

#include "storage_app.h"

namespace ndp {

struct Instance {
  std::uint64_t id = 0;
  StorageAppFn app = nullptr;
  std::vector<std::int64_t> streams;  // the only streams this instance may touch
  std::int64_t state_size = 0;

  // Touched only by the command whose turn it is.
  std::vector<std::uint8_t> state;
  bool alive = false;  // set by MINIT, cleared by MDEINIT
  std::set<std::int64_t> tasks;  // Summarizer tasks opened by INIT_TSK

  // Next ticket to hand out; guarded by the engine's queue mutex.
  std::uint64_t next_ticket = 0;

  bool may_access(std::int64_t stream) const {
    return std::find(streams.begin(), streams.end(), stream) != streams.end();
  }

  // Turn-taking (see file comment).
  std::mutex turn_mu;
  std::condition_variable turn_cv;
  std::uint64_t serving = 0;
};

// Holds an instance's turn for one command's lifetime.
class InstanceTurn {
 public:
  InstanceTurn(Instance& inst, std::uint64_t ticket) : inst_(inst) {
    std::unique_lock<std::mutex> lock(inst_.turn_mu);
    inst_.turn_cv.wait(lock, [&] { return inst_.serving == ticket; });
  }
  ~InstanceTurn() {
    {
      std::lock_guard<std::mutex> lock(inst_.turn_mu);
      ++inst_.serving;
    }
    inst_.turn_cv.notify_all();
  }
  InstanceTurn(const InstanceTurn&) = delete;
  InstanceTurn& operator=(const InstanceTurn&) = delete;

 private:
  Instance& inst_;
};

}  // namespace ndp
