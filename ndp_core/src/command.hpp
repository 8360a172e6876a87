// Commands and completions: the entries of the submission and completion queues.
//
// Opcodes keep the papers' names (Morpheus MINIT/MREAD/MWRITE/MDEINIT,
// Summarizer *_TSK) so traces read like the papers. A command only carries
// host-buffer handles (raw pointers); the Python layer keeps the owning
// objects alive until the command's completion has been consumed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "storage_app.h"

namespace ndp {

enum class Opcode : int32_t {
  READ = 0x02,  // NVMe read / write keep their NVMe numbers
  WRITE = 0x01,
  MINIT = 0x80,
  MREAD = 0x81,
  MWRITE = 0x82,
  MDEINIT = 0x83,
  MRUN = 0x84,  // run the app on a host buffer (SSDlet port delivery; no pages read)
  INIT_TSK = 0x90,
  READ_PROC_TSK = 0x91,
  READ_FILT_TSK = 0x92,
  FINAL_TSK = 0x93,
};

const char* opcode_name(Opcode op);

// Completion statuses: the app's own statuses (0, 1, 2, 5) pass through;
// engine-side errors start at 16 so the two never collide.
namespace status {
constexpr int32_t OK = APP_OK;
constexpr int32_t NEEDS_MORE_INPUT = APP_NEEDS_MORE_INPUT;
constexpr int32_t BAD_INPUT = APP_BAD_INPUT;
constexpr int32_t OUT_OF_SPACE = APP_OUT_OF_SPACE;
constexpr int32_t INVALID_OPCODE = 16;
constexpr int32_t INVALID_STREAM = 17;
constexpr int32_t INVALID_INSTANCE = 18;   // unknown, not yet installed or freed
constexpr int32_t ACCESS_DENIED = 19;      // stream not given to this instance, or read-only
constexpr int32_t OUT_OF_RANGE = 20;       // pages past the end of the stream
constexpr int32_t IO_ERROR = 21;
constexpr int32_t APP_ERROR = 22;          // app returned a status outside the ABI
constexpr int32_t CAPACITY_EXCEEDED = 23;  // app claims it wrote past a capacity
constexpr int32_t TASK_ERROR = 24;         // Summarizer task not initialized
constexpr int32_t ABORTED = 25;            // an earlier part of the same split request failed
constexpr int32_t INTERNAL = 26;
constexpr int32_t RETURNED_RAW = 27;  // the page came back unprocessed (full task queue)
constexpr int32_t TIMEOUT = 28;       // the command's completion did not arrive in time

inline const char* name(int32_t s) {
  switch (s) {
    case OK: return "OK";
    case NEEDS_MORE_INPUT: return "NEEDS_MORE_INPUT";
    case BAD_INPUT: return "BAD_INPUT";
    case OUT_OF_SPACE: return "OUT_OF_SPACE";
    case INVALID_OPCODE: return "INVALID_OPCODE";
    case INVALID_STREAM: return "INVALID_STREAM";
    case INVALID_INSTANCE: return "INVALID_INSTANCE";
    case ACCESS_DENIED: return "ACCESS_DENIED";
    case OUT_OF_RANGE: return "OUT_OF_RANGE";
    case IO_ERROR: return "IO_ERROR";
    case APP_ERROR: return "APP_ERROR";
    case CAPACITY_EXCEEDED: return "CAPACITY_EXCEEDED";
    case TASK_ERROR: return "TASK_ERROR";
    case ABORTED: return "ABORTED";
    case INTERNAL: return "INTERNAL";
    case RETURNED_RAW: return "RETURNED_RAW";
    case TIMEOUT: return "TIMEOUT";
  }
  return "UNKNOWN";
}
}  // namespace status

// Faults a command may carry (fault injection; ndp_core/device.py names them).
namespace fault {
constexpr int32_t NONE = 0;
constexpr int32_t MEDIA = 1;        // uncorrectable page read
constexpr int32_t APP = 2;          // the StorageApp fails
constexpr int32_t TIMEOUT = 3;      // the completion is lost
constexpr int32_t TQ_OVERFLOW = 4;  // the task queue is full: the page returns raw
}  // namespace fault

// NVMe limits one command to 65,536 logical blocks (16-bit zero-based count).
constexpr std::uint64_t kMaxPagesPerCommand = 65536;

// Splits [first_page, first_page + n_pages) into runs of at most `max_pages`.
// A zero-page request stays one (empty) command so it still completes.
inline std::vector<std::pair<std::uint64_t, std::uint64_t>> split_request(
    std::uint64_t first_page, std::uint64_t n_pages,
    std::uint64_t max_pages = kMaxPagesPerCommand) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> parts;
  if (max_pages == 0) max_pages = kMaxPagesPerCommand;
  if (n_pages == 0) parts.emplace_back(first_page, 0);
  for (std::uint64_t done = 0; done < n_pages; done += max_pages)
    parts.emplace_back(first_page + done, std::min(max_pages, n_pages - done));
  return parts;
}

struct Instance;

// State shared by the parts of one split MREAD: later parts append to the
// outputs after the bytes earlier parts wrote. Parts of one instance run in
// submission order, so the fields need no lock of their own.
struct SplitChain {
  std::vector<std::int64_t> used;  // bytes already written per output
  bool failed = false;
};

struct Command {
  std::uint64_t request = 0;  // logical request id (what Python waits on)
  std::uint32_t part = 0;     // index of this part within the request
  Opcode opcode = Opcode::READ;
  std::uint64_t instance = 0;  // 0: no instance (plain READ/WRITE)
  std::int64_t stream = -1;
  std::uint64_t first_page = 0;
  std::uint64_t n_pages = 0;
  std::int64_t task = -1;
  // Host buffers: READ destination, WRITE / MWRITE source, MDEINIT state copy.
  std::uint8_t* data = nullptr;
  std::int64_t data_len = 0;
  std::vector<AppOutput> outputs;  // app outputs (written fields ignored on input)
  std::int64_t* counters = nullptr;
  std::int64_t n_counters = 0;
  std::vector<std::int64_t> args;  // app parameters (AppCall.args)
  std::int32_t fault = fault::NONE;  // injected fault (emulation)
  // Byte offset of this part within the logical request (error offsets are
  // reported relative to the request, not the part).
  std::int64_t byte_offset = 0;
  // Filled in by the engine at submission.
  std::shared_ptr<Instance> inst;
  std::uint64_t ticket = 0;
  std::shared_ptr<SplitChain> chain;
};

struct Completion {
  std::uint64_t command_id = 0;
  std::uint32_t part = 0;
  std::int32_t status = status::OK;
  std::int32_t app_status = 0;  // what the app returned, when an app ran
  std::vector<std::int64_t> result_sizes;  // bytes written per output
  std::int64_t error_offset = -1;
  std::int64_t value = 0;  // MINIT: the instance id
  bool raw_page = false;   // dynamic mode: the raw page came back unprocessed
};

}  // namespace ndp
