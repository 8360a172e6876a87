// The command engine: the functional core of the emulated computational SSD.
//
// The host side (any number of Python threads) submits commands into one
// NVMe-style queue pair; N worker threads (the device's embedded cores) take
// them in order, read pages, run StorageApps and post completions. The host
// side reaps the completion ring into per-request records, gathering the
// parts of split requests into one logical completion. No method touches
// Python: the bindings release the GIL around every call that may block.
//
// The engine is functional: modeled time (and the task queue's decisions in
// it) is computed from the apps' work counters by device_emulator's model.
// Commands may carry an injected fault (emulation of media, app and link
// failures), which they then complete with.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "command.hpp"
#include "instance.hpp"
#include "queue.hpp"
#include "stream.hpp"

namespace ndp {

class Engine {
 public:
  Engine(std::uint64_t page_size, unsigned cores, std::size_t queue_depth);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  std::uint64_t page_size() const { return page_size_; }
  unsigned cores() const { return cores_; }
  std::size_t queue_depth() const { return qp_.sq.capacity(); }

  // Streams (host side, synchronous).
  std::int64_t stream_create(const std::string& path, bool writable);
  void stream_close(std::int64_t stream);
  std::shared_ptr<Stream> stream(std::int64_t id) const;  // throws std::out_of_range
  std::shared_ptr<Stream> find_stream(std::int64_t id) const;  // nullptr when unknown

  // Registers an instance record (the host driver's half of MINIT); the MINIT
  // command that follows installs it on the device.
  std::uint64_t instance_create(std::uintptr_t app, std::int64_t state_size,
                                const std::vector<std::int64_t>& streams);

  // State size of a live instance record, or -1 if there is none.
  std::int64_t instance_state_size(std::uint64_t id);

  // Enqueues a request (split into parts if it spans more than
  // kMaxPagesPerCommand pages) and returns its id; blocks while the
  // submission ring is full. Throws std::invalid_argument for bad arguments
  // and std::runtime_error once the engine is closed.
  std::uint64_t submit(Command request);

  // Waits for request `id`; nullopt on timeout (negative: wait forever).
  // Throws std::out_of_range for an unknown id or one consumed already.
  std::optional<Completion> wait(std::uint64_t id, double timeout_s);
  // Every completed request not consumed yet (each one is returned once).
  std::vector<Completion> poll();
  std::size_t outstanding();
  // True while request `id` has been submitted and not yet consumed.
  bool is_outstanding(std::uint64_t id);

  // Stops accepting commands, runs what is queued, joins the workers.
  void close();

 private:
  struct Request {
    std::uint32_t parts = 0;
    std::uint32_t done = 0;
    std::uint32_t first_error_part = UINT32_MAX;
    Completion merged;
  };

  void worker_loop();
  Completion execute(Command& cmd, std::vector<std::uint8_t>& scratch);
  Completion run_instance_command(Command& cmd, std::vector<std::uint8_t>& scratch);
  Completion run_app(Command& cmd, Instance& inst, const std::uint8_t* input,
                     std::int64_t input_len, bool at_eof);
  static bool inject_fault(Command& cmd, Completion& c);
  void post(Completion&& c);
  void reap_locked();
  void merge_locked(Completion&& c);
  void enqueue_locked(std::unique_lock<std::mutex>& lock, Command&& part);

  const std::uint64_t page_size_;
  const unsigned cores_;

  QueuePair qp_;  // qp_.mu also guards requests_, instances_ and tickets
  std::unordered_map<std::uint64_t, Request> requests_;
  std::unordered_map<std::uint64_t, std::shared_ptr<Instance>> instances_;
  std::uint64_t next_request_ = 1;
  std::uint64_t next_instance_ = 1;

  mutable std::mutex streams_mu_;
  std::unordered_map<std::int64_t, std::shared_ptr<Stream>> streams_;
  std::int64_t next_stream_ = 1;

  std::vector<std::thread> workers_;
  std::mutex close_mu_;
  bool closed_ = false;
};

}  // namespace ndp
