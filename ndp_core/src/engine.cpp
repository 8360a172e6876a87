#include "engine.hpp"

#include <cstring>
#include <stdexcept>
#include <system_error>

namespace ndp {

const char* opcode_name(Opcode op) {
  switch (op) {
    case Opcode::READ: return "READ";
    case Opcode::WRITE: return "WRITE";
    case Opcode::MINIT: return "MINIT";
    case Opcode::MREAD: return "MREAD";
    case Opcode::MWRITE: return "MWRITE";
    case Opcode::MDEINIT: return "MDEINIT";
    case Opcode::MRUN: return "MRUN";
    case Opcode::INIT_TSK: return "INIT_TSK";
    case Opcode::READ_PROC_TSK: return "READ_PROC_TSK";
    case Opcode::READ_FILT_TSK: return "READ_FILT_TSK";
    case Opcode::FINAL_TSK: return "FINAL_TSK";
  }
  return "UNKNOWN";
}

namespace {

bool is_instance_opcode(Opcode op) { return op != Opcode::READ && op != Opcode::WRITE; }

// Commands whose payload is a page range of a stream, and so may be split.
bool is_paged(Opcode op) {
  return op == Opcode::READ || op == Opcode::WRITE || op == Opcode::MREAD ||
         op == Opcode::READ_PROC_TSK || op == Opcode::READ_FILT_TSK;
}

bool is_task_read(Opcode op) {
  return op == Opcode::READ_PROC_TSK || op == Opcode::READ_FILT_TSK;
}

}  // namespace

Engine::Engine(std::uint64_t page_size, unsigned cores, std::size_t queue_depth)
    : page_size_(page_size), cores_(cores), qp_(queue_depth) {
  if (page_size == 0) throw std::invalid_argument("page_size must be positive");
  if (cores == 0) throw std::invalid_argument("cores must be at least 1");
  workers_.reserve(cores);
  for (unsigned i = 0; i < cores; ++i) workers_.emplace_back([this] { worker_loop(); });
}

Engine::~Engine() { close(); }

void Engine::close() {
  {
    std::lock_guard<std::mutex> guard(close_mu_);
    if (closed_) return;
    closed_ = true;
  }
  {
    std::lock_guard<std::mutex> lock(qp_.mu);
    qp_.stopping = true;
  }
  qp_.sq_not_empty.notify_all();
  qp_.sq_not_full.notify_all();
  qp_.cq_not_full.notify_all();
  qp_.cq_not_empty.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

// ---------------------------------------------------------------- streams

std::int64_t Engine::stream_create(const std::string& path, bool writable) {
  std::lock_guard<std::mutex> lock(streams_mu_);
  std::int64_t id = next_stream_;
  auto s = std::make_shared<Stream>(id, path, page_size_, writable);  // may throw OSError
  ++next_stream_;
  streams_.emplace(id, std::move(s));
  return id;
}

void Engine::stream_close(std::int64_t id) {
  std::lock_guard<std::mutex> lock(streams_mu_);
  if (streams_.erase(id) == 0) throw std::out_of_range("unknown stream " + std::to_string(id));
}

std::shared_ptr<Stream> Engine::find_stream(std::int64_t id) const {
  std::lock_guard<std::mutex> lock(streams_mu_);
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second;
}

std::shared_ptr<Stream> Engine::stream(std::int64_t id) const {
  auto s = find_stream(id);
  if (!s) throw std::out_of_range("unknown stream " + std::to_string(id));
  return s;
}

// -------------------------------------------------------------- instances

std::uint64_t Engine::instance_create(std::uintptr_t app, std::int64_t state_size,
                                      const std::vector<std::int64_t>& streams) {
  if (app == 0) throw std::invalid_argument("app address is null");
  if (state_size < 0 || state_size > (std::int64_t{1} << 32))
    throw std::invalid_argument("state_size must be in [0, 4 GiB]");
  for (std::int64_t s : streams) stream(s);  // every stream must exist now
  auto inst = std::make_shared<Instance>();
  inst->app = reinterpret_cast<StorageAppFn>(app);
  inst->streams = streams;
  inst->state_size = state_size;
  std::lock_guard<std::mutex> lock(qp_.mu);
  if (qp_.stopping) throw std::runtime_error("engine is closed");
  inst->id = next_instance_++;
  instances_.emplace(inst->id, inst);
  return inst->id;
}

std::int64_t Engine::instance_state_size(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(qp_.mu);
  auto it = instances_.find(id);
  return it == instances_.end() ? -1 : it->second->state_size;
}

// ------------------------------------------------------------- submission

std::uint64_t Engine::submit(Command req) {
  if (req.n_pages > UINT64_MAX / page_size_ - req.first_page)
    throw std::invalid_argument("page range overflows");
  if (req.data_len < 0 || req.n_counters < 0)
    throw std::invalid_argument("negative buffer length");
  for (const AppOutput& o : req.outputs)
    if (o.capacity < 0 || (o.capacity > 0 && o.data == nullptr))
      throw std::invalid_argument("bad output buffer");

  // READ: the destination must hold every byte the pages have.
  if (req.opcode == Opcode::READ) {
    std::shared_ptr<Stream> s;
    try {
      s = stream(req.stream);
    } catch (const std::out_of_range&) {
    }  // an unknown stream completes with INVALID_STREAM
    if (s && static_cast<std::uint64_t>(req.data_len) < s->span_bytes(req.first_page, req.n_pages))
      throw std::invalid_argument("read buffer is smaller than the requested pages");
  }

  // Split into parts of at most kMaxPagesPerCommand pages.
  std::vector<Command> parts;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  if (is_paged(req.opcode))
    ranges = split_request(req.first_page, req.n_pages);
  else
    ranges.emplace_back(req.first_page, req.n_pages);
  std::shared_ptr<SplitChain> chain;
  if (ranges.size() > 1 && is_instance_opcode(req.opcode)) {
    chain = std::make_shared<SplitChain>();
    chain->used.assign(req.outputs.size(), 0);
  }
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    Command part = req;
    part.part = static_cast<std::uint32_t>(i);
    part.first_page = ranges[i].first;
    part.n_pages = ranges[i].second;
    if (is_paged(req.opcode)) {
      std::uint64_t offset = (ranges[i].first - req.first_page) * page_size_;
      part.byte_offset = static_cast<std::int64_t>(offset);
      if (req.opcode == Opcode::READ || req.opcode == Opcode::WRITE) {
        // Each part owns its slice of the host buffer.
        std::uint64_t len = static_cast<std::uint64_t>(req.data_len);
        std::uint64_t begin = offset < len ? offset : len;
        std::uint64_t end = offset + part.n_pages * page_size_;
        if (end > len) end = len;
        part.data = req.data ? req.data + begin : nullptr;
        part.data_len = static_cast<std::int64_t>(end - begin);
      }
    }
    part.chain = chain;
    parts.push_back(std::move(part));
  }

  std::unique_lock<std::mutex> lock(qp_.mu);
  if (qp_.stopping) throw std::runtime_error("engine is closed");
  std::shared_ptr<Instance> inst;
  if (is_instance_opcode(req.opcode)) {
    auto it = instances_.find(req.instance);
    if (it != instances_.end()) inst = it->second;  // else: INVALID_INSTANCE completion
  }
  std::uint64_t id = next_request_++;
  Request& r = requests_[id];
  r.parts = static_cast<std::uint32_t>(parts.size());
  r.merged.command_id = id;
  for (Command& part : parts) {
    part.request = id;
    part.inst = inst;
    enqueue_locked(lock, std::move(part));
  }
  return id;
}

void Engine::enqueue_locked(std::unique_lock<std::mutex>& lock, Command&& part) {
  while (qp_.sq.full() && !qp_.stopping) {
    // Reap while we wait: a worker may be blocked on a full completion ring,
    // and this thread may be the only host thread around to drain it.
    reap_locked();
    qp_.sq_not_full.wait(lock);
  }
  if (qp_.stopping) {  // closed mid-request: the rest of the parts fail
    Completion c;
    c.command_id = part.request;
    c.part = part.part;
    c.status = status::ABORTED;
    merge_locked(std::move(c));
    return;
  }
  // Tickets follow queue order; see instance.hpp for why that cannot deadlock.
  if (part.inst) part.ticket = part.inst->next_ticket++;
  qp_.sq.push(std::move(part));
  qp_.sq_not_empty.notify_one();
}

// -------------------------------------------------------------- reaping

void Engine::merge_locked(Completion&& c) {
  auto it = requests_.find(c.command_id);
  if (it == requests_.end()) return;
  Request& r = it->second;
  Completion& m = r.merged;
  if (m.result_sizes.size() < c.result_sizes.size()) m.result_sizes.resize(c.result_sizes.size(), 0);
  for (std::size_t k = 0; k < c.result_sizes.size(); ++k) m.result_sizes[k] += c.result_sizes[k];
  m.raw_page = m.raw_page || c.raw_page;
  if (c.part == 0) m.value = c.value;
  // The earliest failing part decides the logical status: later parts of a
  // failed chain only report ABORTED.
  if (c.status != status::OK && c.part < r.first_error_part) {
    r.first_error_part = c.part;
    m.status = c.status;
    m.app_status = c.app_status;
    m.error_offset = c.error_offset;
  } else if (r.first_error_part == UINT32_MAX && c.part == 0) {
    m.app_status = c.app_status;
  }
  if (++r.done == r.parts) qp_.cq_not_empty.notify_all();
}

void Engine::reap_locked() {
  if (qp_.cq.empty()) return;
  while (!qp_.cq.empty()) merge_locked(qp_.cq.pop());
  qp_.cq_not_full.notify_all();
}

void Engine::post(Completion&& c) {
  {
    std::unique_lock<std::mutex> lock(qp_.mu);
    qp_.cq_not_full.wait(lock, [&] { return qp_.stopping || !qp_.cq.full(); });
    if (qp_.cq.full())
      merge_locked(std::move(c));  // closing: nobody may reap any more
    else
      qp_.cq.push(std::move(c));
  }
  qp_.cq_not_empty.notify_all();
}

std::optional<Completion> Engine::wait(std::uint64_t id, double timeout_s) {
  using clock = std::chrono::steady_clock;
  const bool forever = timeout_s < 0;
  const auto deadline =
      clock::now() + std::chrono::duration_cast<clock::duration>(
                         std::chrono::duration<double>(forever ? 0.0 : timeout_s));
  std::unique_lock<std::mutex> lock(qp_.mu);
  for (;;) {
    reap_locked();
    auto it = requests_.find(id);
    if (it == requests_.end())
      throw std::out_of_range("unknown or already consumed command " + std::to_string(id));
    if (it->second.done == it->second.parts) {
      Completion c = std::move(it->second.merged);
      requests_.erase(it);
      return c;
    }
    if (forever) {
      qp_.cq_not_empty.wait(lock);
    } else {
      if (clock::now() >= deadline) return std::nullopt;
      qp_.cq_not_empty.wait_until(lock, deadline);
    }
  }
}

std::vector<Completion> Engine::poll() {
  std::vector<Completion> out;
  std::lock_guard<std::mutex> lock(qp_.mu);
  reap_locked();
  for (auto it = requests_.begin(); it != requests_.end();) {
    if (it->second.done == it->second.parts) {
      out.push_back(std::move(it->second.merged));
      it = requests_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::size_t Engine::outstanding() {
  std::lock_guard<std::mutex> lock(qp_.mu);
  return requests_.size();
}

bool Engine::is_outstanding(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(qp_.mu);
  return requests_.count(id) != 0;
}

// -------------------------------------------------------------- workers

void Engine::worker_loop() {
  std::vector<std::uint8_t> scratch;  // this core's page buffer, reused
  for (;;) {
    Command cmd;
    {
      std::unique_lock<std::mutex> lock(qp_.mu);
      qp_.sq_not_empty.wait(lock, [&] { return qp_.stopping || !qp_.sq.empty(); });
      if (qp_.sq.empty()) return;  // closing and drained
      cmd = qp_.sq.pop();
    }
    qp_.sq_not_full.notify_one();
    Completion c;
    try {
      c = execute(cmd, scratch);
    } catch (...) {  // never let a command take the process down
      c = Completion{};
      c.status = status::INTERNAL;
    }
    c.command_id = cmd.request;
    c.part = cmd.part;
    cmd = Command{};  // drop the instance reference before posting
    post(std::move(c));
  }
}

Completion Engine::execute(Command& cmd, std::vector<std::uint8_t>& scratch) {
  Completion c;
  if (is_instance_opcode(cmd.opcode)) return run_instance_command(cmd, scratch);
  if (cmd.opcode != Opcode::READ && cmd.opcode != Opcode::WRITE) {
    c.status = status::INVALID_OPCODE;
    return c;
  }
  std::shared_ptr<Stream> s = find_stream(cmd.stream);
  if (!s) {
    c.status = status::INVALID_STREAM;
    return c;
  }
  try {
    if (cmd.opcode == Opcode::READ) {
      if (cmd.first_page + cmd.n_pages > s->pages()) {
        c.status = status::OUT_OF_RANGE;
        return c;
      }
      std::uint64_t want = s->span_bytes(cmd.first_page, cmd.n_pages);
      if (want > static_cast<std::uint64_t>(cmd.data_len)) {
        c.status = status::INTERNAL;  // submit() checks this; the file may have grown since
        return c;
      }
      std::size_t got = s->read_at(cmd.first_page * page_size_, cmd.data, want);
      c.result_sizes = {static_cast<std::int64_t>(got)};
    } else {
      if (!s->writable()) {
        c.status = status::ACCESS_DENIED;
        return c;
      }
      s->write_at(cmd.first_page * page_size_, cmd.data, static_cast<std::size_t>(cmd.data_len));
      c.result_sizes = {cmd.data_len};
    }
  } catch (const std::system_error&) {
    c.status = status::IO_ERROR;
  }
  return c;
}

Completion Engine::run_instance_command(Command& cmd, std::vector<std::uint8_t>& scratch) {
  Completion c;
  if (!cmd.inst) {
    c.status = status::INVALID_INSTANCE;
    return c;
  }
  Instance& inst = *cmd.inst;
  InstanceTurn turn(inst, cmd.ticket);  // one command of this instance at a time, in order

  if (cmd.opcode == Opcode::MINIT) {
    inst.state.assign(static_cast<std::size_t>(inst.state_size), 0);
    // MINIT's data: the app's initial state (e.g. its parameters).
    if (cmd.data_len > 0)
      std::memcpy(inst.state.data(), cmd.data,
                  static_cast<std::size_t>(std::min<std::int64_t>(cmd.data_len, inst.state_size)));
    inst.alive = true;
    c.value = static_cast<std::int64_t>(inst.id);
    return c;
  }
  if (!inst.alive) {
    c.status = status::INVALID_INSTANCE;
    return c;
  }
  if (cmd.chain && cmd.chain->failed) {
    c.status = status::ABORTED;
    return c;
  }

  switch (cmd.opcode) {
    case Opcode::MDEINIT: {
      // Finish: hand the final state back (the command's "return value").
      std::size_t n = inst.state.size();
      if (n > static_cast<std::size_t>(cmd.data_len)) n = static_cast<std::size_t>(cmd.data_len);
      if (n) std::memcpy(cmd.data, inst.state.data(), n);
      c.result_sizes = {static_cast<std::int64_t>(n)};
      inst.alive = false;
      inst.tasks.clear();
      std::vector<std::uint8_t>().swap(inst.state);
      std::lock_guard<std::mutex> lock(qp_.mu);
      instances_.erase(inst.id);
      return c;
    }
    case Opcode::INIT_TSK: {
      if (cmd.task < 0) {
        c.status = status::TASK_ERROR;
        return c;
      }
      c = run_app(cmd, inst, nullptr, 0, false);
      if (c.status == status::OK) inst.tasks.insert(cmd.task);
      return c;
    }
    case Opcode::FINAL_TSK: {
      if (!inst.tasks.count(cmd.task)) {
        c.status = status::TASK_ERROR;
        return c;
      }
      c = run_app(cmd, inst, nullptr, 0, true);
      if (c.status == status::OK) inst.tasks.erase(cmd.task);
      return c;
    }
    case Opcode::MRUN: {
      // A packet handed to an SSDlet's port: the host buffer is the whole input.
      if (Completion injected; inject_fault(cmd, injected)) return injected;
      return run_app(cmd, inst, cmd.data, cmd.data_len, true);
    }
    case Opcode::MREAD:
    case Opcode::READ_PROC_TSK:
    case Opcode::READ_FILT_TSK:
    case Opcode::MWRITE: {
      if (Completion injected; inject_fault(cmd, injected)) return injected;
      if (is_task_read(cmd.opcode) && !inst.tasks.count(cmd.task)) {
        c.status = status::TASK_ERROR;
        return c;
      }
      // Isolation first: an instance learns nothing about streams it was not given.
      if (!inst.may_access(cmd.stream)) {
        c.status = status::ACCESS_DENIED;
        return c;
      }
      std::shared_ptr<Stream> s = find_stream(cmd.stream);
      if (!s) {
        c.status = status::INVALID_STREAM;
        return c;
      }
      try {
        if (cmd.opcode == Opcode::MWRITE) {
          if (!s->writable()) {
            c.status = status::ACCESS_DENIED;
            return c;
          }
          c = run_app(cmd, inst, cmd.data, cmd.data_len, true);
          // Output 0 is what the app produced for storage.
          if (c.status == status::OK && !cmd.outputs.empty() && !c.result_sizes.empty())
            s->write_at(cmd.first_page * page_size_, cmd.outputs[0].data,
                        static_cast<std::size_t>(c.result_sizes[0]));
          return c;
        }
        if (cmd.first_page + cmd.n_pages > s->pages()) {
          c.status = status::OUT_OF_RANGE;
          return c;
        }
        std::uint64_t want = s->span_bytes(cmd.first_page, cmd.n_pages);
        if (scratch.size() < want) scratch.resize(want);
        std::size_t got = s->read_at(cmd.first_page * page_size_, scratch.data(), want);
        bool at_eof = cmd.first_page + cmd.n_pages >= s->pages();
        return run_app(cmd, inst, scratch.data(), static_cast<std::int64_t>(got), at_eof);
      } catch (const std::system_error&) {
        if (cmd.chain) cmd.chain->failed = true;
        c = Completion{};
        c.status = status::IO_ERROR;
        return c;
      }
    }
    default:
      c.status = status::INVALID_OPCODE;
      return c;
  }
}

// Emulated faults: the command fails the way the hardware would make it fail.
bool Engine::inject_fault(Command& cmd, Completion& c) {
  switch (cmd.fault) {
    case fault::MEDIA: c.status = status::IO_ERROR; break;
    case fault::APP: c.status = status::APP_ERROR; break;
    case fault::TIMEOUT: c.status = status::TIMEOUT; break;
    case fault::TQ_OVERFLOW:
      c.status = status::RETURNED_RAW;
      c.raw_page = true;
      break;
    default: return false;
  }
  if (cmd.chain) cmd.chain->failed = true;
  return true;
}

Completion Engine::run_app(Command& cmd, Instance& inst, const std::uint8_t* input,
                           std::int64_t input_len, bool at_eof) {
  Completion c;
  // Outputs of a split request continue where the previous part stopped.
  std::vector<AppOutput> outs = cmd.outputs;
  for (std::size_t k = 0; k < outs.size(); ++k) {
    std::int64_t used = cmd.chain ? cmd.chain->used[k] : 0;
    outs[k].data = outs[k].data ? outs[k].data + used : nullptr;
    outs[k].capacity -= used;
    outs[k].written = 0;
  }
  // Snapshot so a failed call leaves no trace (the caller may retry).
  std::vector<std::uint8_t> saved_state = inst.state;
  std::vector<std::int64_t> saved_counters(cmd.counters, cmd.counters + cmd.n_counters);

  AppCall call{};
  call.abi_version = NDP_APP_ABI_VERSION;
  call.opcode = static_cast<std::int64_t>(cmd.opcode);
  call.task = cmd.task;
  call.first_page = static_cast<std::int64_t>(cmd.first_page);
  call.input = input;
  call.input_len = input_len;
  call.at_eof = at_eof ? 1 : 0;
  call.state = inst.state.empty() ? nullptr : inst.state.data();
  call.state_size = static_cast<std::int64_t>(inst.state.size());
  call.outputs = outs.empty() ? nullptr : outs.data();
  call.n_outputs = static_cast<std::int64_t>(outs.size());
  call.counters = cmd.counters;
  call.n_counters = cmd.n_counters;
  call.error_offset = -1;
  call.args = cmd.args.empty() ? nullptr : cmd.args.data();
  call.n_args = static_cast<std::int64_t>(cmd.args.size());

  std::int32_t rc = inst.app(&call);

  c.app_status = rc;
  c.result_sizes.reserve(outs.size());
  for (const AppOutput& o : outs) c.result_sizes.push_back(o.written);
  switch (rc) {
    case APP_OK:
      c.status = status::OK;
      for (const AppOutput& o : outs)
        if (o.written < 0 || o.written > o.capacity) c.status = status::CAPACITY_EXCEEDED;
      break;
    case APP_NEEDS_MORE_INPUT:
    case APP_OUT_OF_SPACE:
      c.status = rc;
      break;
    case APP_BAD_INPUT:
      c.status = rc;
      c.error_offset = call.error_offset < 0 ? -1 : call.error_offset + cmd.byte_offset;
      break;
    default:
      c.status = status::APP_ERROR;
  }
  if (c.status != status::OK) {
    if (c.status == status::CAPACITY_EXCEEDED) c.result_sizes.assign(outs.size(), 0);
    inst.state = std::move(saved_state);
    std::copy(saved_counters.begin(), saved_counters.end(), cmd.counters);
    if (cmd.chain) cmd.chain->failed = true;
  } else if (cmd.chain) {
    for (std::size_t k = 0; k < outs.size(); ++k) cmd.chain->used[k] += outs[k].written;
  }
  return c;
}

}  // namespace ndp
