// The link state machine; see link_core.h and PROTOCOL.md sections 8-11.
#include "link_core.h"

#include <algorithm>
#include <cstring>
#include <random>

namespace warehouse {
namespace {

bool IsNodeAddress(uint16_t a) { return a >= WH_ADDR_BOT_FIRST && a <= WH_ADDR_LED_LAST; }

}  // namespace

LinkCore::LinkCore(const LinkConfig& config, uint64_t now)
    : config_(config), start_(now), next_heartbeat_(now) {
  rng_ = config_.seed != 0 ? config_.seed : (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  if (rng_ == 0) rng_ = 1;  // xorshift never leaves 0
  session_ = config_.controller_session;
  while (session_ == 0) session_ = Random();
  config_.max_transmissions = std::max<uint32_t>(config_.max_transmissions, 1);
  config_.ack_timeout_ms = std::max<uint32_t>(config_.ack_timeout_ms, 1);
  config_.ack_timeout_max_ms = std::max(config_.ack_timeout_max_ms, config_.ack_timeout_ms);
  config_.heartbeat_period_ms = std::max<uint32_t>(config_.heartbeat_period_ms, 1);
  config_.max_queued = std::max<uint32_t>(config_.max_queued, 1);
  wh_decoder_init(&decoder_);
}

uint32_t LinkCore::Random() {
  // xorshift64*: the jitter only has to differ between controllers, not be unpredictable.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return static_cast<uint32_t>((rng_ * 0x2545F4914F6CDD1DULL) >> 32);
}

uint32_t LinkCore::Jittered(uint32_t ms) {
  return ms + static_cast<uint32_t>(uint64_t{ms} * (Random() % (config_.jitter_percent + 1)) / 100);
}

void LinkCore::Write(wh_frame& f) {
  uint8_t buf[WH_MAX_WIRE];
  f.version = WH_PROTO_VERSION;
  f.src = WH_ADDR_CONTROLLER;
  size_t n = wh_encode(&f, buf, sizeof buf);
  if (n == 0) return;  // Send() refused anything that does not encode; nothing else can fail
  out_.insert(out_.end(), buf, buf + n);
  counters_.frames_out++;
  counters_.bytes_out += n;
}

void LinkCore::Event(EventKind kind, Reason reason, uint16_t node, uint32_t id) {
  LinkEvent& e = events_.emplace_back();
  std::memset(&e, 0, sizeof e);
  e.kind = kind;
  e.reason = reason;
  e.node = node;
  e.command_id = id;
}

void LinkCore::TakeOutput(std::vector<uint8_t>& bytes, std::vector<LinkEvent>& events) {
  bytes.clear();
  events.clear();
  bytes.swap(out_);
  events.swap(events_);
}

// --- receiving ---

void LinkCore::Receive(const uint8_t* data, size_t len, uint64_t now) {
  wh_frame f;
  while (len > 0) {
    int got = 0;
    size_t used = wh_decoder_feed(&decoder_, data, len, &f, &got);
    data += used;
    len -= used;
    if (got) Handle(f, now);
  }
}

void LinkCore::Handle(const wh_frame& f, uint64_t now) {
  // Section 1: nodes talk to the controller only; broadcast is never a source.
  if (!IsNodeAddress(f.src) || f.dst != WH_ADDR_CONTROLLER) {
    counters_.dropped_address++;
    return;
  }
  Node& n = nodes_[f.src];
  n.last_heard = now;
  n.frames_in++;

  if ((f.flags & WH_F_IS_ACK) && MatchAck(f.src, n, f, now)) return;
  switch (f.type) {
    case WH_T_HELLO:
      HandleHello(f.src, n, f, now);
      return;
    case WH_T_FAULT:
      // A retransmitted FAULT we already accepted: acknowledge again, deliver once.
      if ((f.flags & WH_F_RETRANSMIT) && n.rx_valid && n.rx_seq == f.seq) {
        counters_.duplicates++;
        SendAck(f.src, n, f, WH_R_OK);
        return;
      }
      if (f.flags & WH_F_ACK_REQ) {
        n.rx_valid = true;
        n.rx_seq = f.seq;
        SendAck(f.src, n, f, WH_R_OK);
      }
      break;
    case WH_T_TELEMETRY:
      // Section 11: a node that never lost the link from its side keeps sending telemetry
      // without LINK_LOST and will not send HELLO, so hearing it is enough. With LINK_LOST set
      // it is holding and will say HELLO once it hears our heartbeat.
      if (n.state == State::kOffline && !(f.u.telemetry.faults & WH_FF_LINK_LOST)) {
        n.state = State::kOnline;
        Event(EventKind::kOnline, Reason::kHeard, f.src);
      }
      break;
    case WH_T_RFID_DATA:  // an answer to nothing in flight (late, or a duplicate answer)
      break;
    default:
      // ACKs matching nothing (typically the second ACK of a retransmitted command), and
      // controller-only types.
      counters_.dropped_unexpected++;
      // Section 8: every accepted ack_req frame is acknowledged, a refused one too.
      if ((f.flags & WH_F_ACK_REQ) && f.type != WH_T_ACK) SendAck(f.src, n, f, WH_R_UNSUPPORTED);
      return;
  }
  Event(EventKind::kMessage, Reason::kNone, f.src);
  events_.back().frame = f;
}

void LinkCore::HandleHello(uint16_t addr, Node& n, const wh_frame& f, uint64_t now) {
  const wh_hello& h = f.u.hello;
  // A repeat of the HELLO we are answering: our WELCOME got lost or crossed it. Send the same
  // WELCOME again at once (section 8: the same acknowledgement) without starting over.
  if ((f.flags & WH_F_RETRANSMIT) && n.rx_valid && n.rx_seq == f.seq && n.session == h.session) {
    counters_.duplicates++;
    if (n.flight.active && n.flight.cmd.id == 0) {
      n.flight.cmd.frame.flags |= WH_F_RETRANSMIT;
      Write(n.flight.cmd.frame);
      counters_.retransmits++;
    }
    return;
  }
  n.rx_valid = true;
  n.rx_seq = f.seq;
  Event(EventKind::kMessage, Reason::kNone, addr);
  events_.back().frame = f;
  if (h.proto_min > WH_PROTO_VERSION || h.proto_max < WH_PROTO_VERSION) {
    counters_.version_rejected++;
    SendAck(addr, n, f, WH_R_VERSION_UNSUPPORTED);
    return;
  }
  // Section 9: a new session is a boot (forget seq and duplicate state); the same session is a
  // node that lost the link. Either way it now holds and dropped its queued segment, so the
  // commands meant for the old state are failed and the brain re-plans.
  if (n.state == State::kOnline) Event(EventKind::kOffline, Reason::kHello, addr);
  FailAll(addr, n, Reason::kHello, Reason::kHello);
  if (n.session != h.session) {
    n.tx_seq = 0;
    n.session = h.session;
  }
  n.state = State::kJoining;
  Command welcome{};
  welcome.frame.type = WH_T_WELCOME;
  welcome.frame.flags = WH_F_IS_ACK;
  welcome.frame.ack = f.seq;
  welcome.frame.u.welcome = {WH_PROTO_VERSION, config_.telemetry_period_ms, session_, h.session};
  n.queue.push_front(welcome);
  StartNext(addr, n, now);
}

bool LinkCore::MatchAck(uint16_t addr, Node& n, const wh_frame& f, uint64_t now) {
  Flight& fl = n.flight;
  if (!fl.active || f.ack != fl.cmd.frame.seq) return false;
  uint8_t result;
  if (f.type == WH_T_ACK && f.u.ack.acked_type == fl.cmd.frame.type) {
    result = f.u.ack.result;
  } else if (f.type == WH_T_RFID_DATA && fl.cmd.frame.type == WH_T_RFID_READ) {
    result = f.u.rfid_data.result;
  } else {
    return false;
  }
  fl.active = false;
  uint32_t rtt = static_cast<uint32_t>(std::min<uint64_t>(now - fl.first_sent, UINT32_MAX));
  if (fl.transmissions == 1) {
    rtt_hist_[std::min<size_t>(rtt, rtt_hist_.size() - 1)]++;
    rtt_samples_++;
  }
  if (fl.cmd.id == 0) {
    // Our WELCOME. A node refusing it (it cannot, in version 1) stays joining until it
    // retries HELLO.
    if (result == WH_R_OK && n.state == State::kJoining) {
      n.state = State::kOnline;
      Event(EventKind::kOnline, Reason::kWelcomed, addr);
    }
  } else {
    counters_.commands_acked++;
    Event(EventKind::kAcked, Reason::kNone, addr, fl.cmd.id);
    LinkEvent& e = events_.back();
    e.transmissions = fl.transmissions;
    e.rtt_ms = rtt;
    e.frame = f;
  }
  StartNext(addr, n, now);
  return true;
}

void LinkCore::SendAck(uint16_t addr, Node& n, const wh_frame& acked, uint8_t result) {
  wh_frame a;
  std::memset(&a, 0, sizeof a);
  a.flags = WH_F_IS_ACK;
  a.dst = addr;
  a.seq = n.tx_seq++;
  a.ack = acked.seq;
  a.type = WH_T_ACK;
  a.u.ack = {acked.type, result, 0};
  Write(a);
}

// --- sending ---

uint32_t LinkCore::Send(uint16_t dst, const wh_frame& msg, uint64_t now) {
  if (!IsNodeAddress(dst)) return 0;
  Command c{};
  c.frame = msg;
  c.frame.version = WH_PROTO_VERSION;
  c.frame.flags = WH_F_ACK_REQ;
  c.frame.src = WH_ADDR_CONTROLLER;
  c.frame.dst = dst;
  c.frame.seq = c.frame.ack = 0;
  uint8_t probe[WH_MAX_WIRE];
  if (wh_encode(&c.frame, probe, sizeof probe) == 0) return 0;
  c.id = next_id_++;
  if (next_id_ == 0) next_id_ = 1;
  counters_.commands_sent++;
  auto it = nodes_.find(dst);
  // Section 11: the controller sends a lost node nothing; a queue that waited for the node's
  // return would replay commands planned for a world that has moved on.
  if (it == nodes_.end() || (it->second.state != State::kOnline && it->second.state != State::kJoining)) {
    counters_.commands_failed++;
    Event(EventKind::kFailed, Reason::kOffline, dst, c.id);
    return c.id;
  }
  if (CommandsFor(it->second) >= config_.max_queued) {
    counters_.commands_failed++;
    counters_.commands_queue_full++;
    Event(EventKind::kFailed, Reason::kQueueFull, dst, c.id);
    return c.id;
  }
  it->second.queue.push_back(c);
  StartNext(dst, it->second, now);
  return c.id;
}

// The brain's commands waiting for or in flight to a node; our WELCOME does not count.
uint32_t LinkCore::CommandsFor(const Node& n) {
  uint32_t count = n.flight.active && n.flight.cmd.id != 0 ? 1 : 0;
  for (const Command& c : n.queue) count += c.id != 0 ? 1 : 0;
  return count;
}

void LinkCore::StartNext(uint16_t addr, Node& n, uint64_t now) {
  if (n.flight.active || n.queue.empty()) return;
  Flight& fl = n.flight;
  fl.active = true;
  fl.cmd = n.queue.front();
  n.queue.pop_front();
  fl.cmd.frame.seq = n.tx_seq++;
  fl.cmd.frame.dst = addr;
  fl.cmd.frame.flags = static_cast<uint8_t>((fl.cmd.frame.flags & WH_F_IS_ACK) | WH_F_ACK_REQ);
  fl.transmissions = 0;
  fl.timeout_ms = config_.ack_timeout_ms;
  fl.first_sent = now;
  Transmit(addr, n, now);
}

void LinkCore::Transmit(uint16_t, Node& n, uint64_t now) {
  Flight& fl = n.flight;
  if (fl.transmissions > 0) {
    fl.cmd.frame.flags |= WH_F_RETRANSMIT;
    counters_.retransmits++;
    fl.timeout_ms = std::min(fl.timeout_ms * 2, config_.ack_timeout_max_ms);
  }
  fl.transmissions++;
  fl.deadline = now + Jittered(fl.timeout_ms);
  Write(fl.cmd.frame);
}

void LinkCore::FailAll(uint16_t addr, Node& n, Reason in_flight, Reason queued) {
  if (n.flight.active) {
    n.flight.active = false;
    if (n.flight.cmd.id != 0) {
      counters_.commands_failed++;
      Event(EventKind::kFailed, in_flight, addr, n.flight.cmd.id);
    }
  }
  for (const Command& c : n.queue) {
    if (c.id == 0) continue;
    counters_.commands_failed++;
    Event(EventKind::kFailed, queued, addr, c.id);
  }
  n.queue.clear();
}

void LinkCore::GoOffline(uint16_t addr, Node& n, Reason why, Reason in_flight) {
  if (n.state == State::kOnline) Event(EventKind::kOffline, why, addr);
  n.state = State::kOffline;
  FailAll(addr, n, in_flight, Reason::kOffline);
}

// --- timers ---

void LinkCore::Tick(uint64_t now) {
  if (now >= next_heartbeat_) {
    wh_frame hb;
    std::memset(&hb, 0, sizeof hb);
    hb.dst = WH_ADDR_BROADCAST;
    hb.seq = broadcast_seq_++;
    hb.type = WH_T_HEARTBEAT;
    hb.u.heartbeat = {session_, static_cast<uint32_t>(now - start_)};
    Write(hb);
    counters_.heartbeats++;
    // Keep the period, but after a stall (a suspended process) do not send a burst.
    next_heartbeat_ += config_.heartbeat_period_ms;
    if (next_heartbeat_ <= now) next_heartbeat_ = now + config_.heartbeat_period_ms;
  }
  for (auto& [addr, n] : nodes_) {
    bool supervised = SilenceSupervised(addr, n);
    if (supervised && now - n.last_heard >= config_.link_timeout_ms) {
      GoOffline(addr, n, Reason::kSilent, Reason::kOffline);
      continue;
    }
    if (n.flight.active && now >= n.flight.deadline) {
      if (n.flight.transmissions >= config_.max_transmissions) {
        GoOffline(addr, n, Reason::kGaveUp, Reason::kGaveUp);
      } else {
        Transmit(addr, n, now);
      }
    }
  }
}

// Only bots send on their own (telemetry); a balcony LED controller speaks only when asked, so
// its silence means nothing and it is lost only when a command to it gives up.
bool LinkCore::SilenceSupervised(uint16_t addr, const Node& n) {
  return addr < kFirstLedAddress && (n.state == State::kOnline || n.state == State::kJoining);
}

uint64_t LinkCore::NextDeadline() const {
  uint64_t t = next_heartbeat_;
  for (const auto& [addr, n] : nodes_) {
    if (SilenceSupervised(addr, n)) t = std::min(t, n.last_heard + config_.link_timeout_ms);
    if (n.flight.active) t = std::min(t, n.flight.deadline);
  }
  return t;
}

// --- reporting ---

uint32_t LinkCore::RttPercentile(unsigned p) const {
  if (rtt_samples_ == 0) return 0;
  uint64_t rank = (rtt_samples_ * std::min(p, 100u) + 99) / 100;
  if (rank == 0) rank = 1;
  uint64_t seen = 0;
  for (size_t ms = 0; ms < rtt_hist_.size(); ms++) {
    seen += rtt_hist_[ms];
    if (seen >= rank) return static_cast<uint32_t>(ms);
  }
  return static_cast<uint32_t>(rtt_hist_.size() - 1);
}

std::vector<NodeStatus> LinkCore::Nodes() const {
  std::vector<NodeStatus> out;
  out.reserve(nodes_.size());
  for (const auto& [addr, n] : nodes_) {
    out.push_back({addr, n.state == State::kOnline, n.session, n.last_heard,
                   static_cast<uint32_t>(n.queue.size() + (n.flight.active ? 1 : 0)), n.frames_in});
  }
  return out;
}

}  // namespace warehouse
