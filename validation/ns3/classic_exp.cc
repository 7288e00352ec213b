// Private experiment build of the dumbbell (bench/ns3/dumbbell.cc) for attributing the
// classic-set differences (docs/validation.md, "Causes (classic set)"). Not part of
// bench/ns3/build.sh: the committed dumbbell binary, and the caches keyed on it, stay as they
// are. Build and run with validation/ns3/classic_exp.py.
//
// It adds congestion controls named "exp-<ccsim name>" (exp-vegas, exp-yeah, ...): ns-3's own
// class, wrapped so that each of the following changes can be switched on alone, by an
// environment variable (1 = on). Each is a place where ns-3 3.44 does not do what Linux does.
//
//   EXP_LINUXRTT   The congestion control's PktsAcked gets Linux's RTT sample instead of
//                  ns-3's SRTT (TcpSocketBase::ReceivedAck passes m_tcb->m_srtt): the RTT, in
//                  ns, of the newest segment this ACK newly (S)ACKed, none when it covers a
//                  retransmitted segment (tcp_clean_rtx_queue: ca_rtt_us / sack->last_sackt;
//                  "no sample" is passed as 0, which every ns-3 model ignores, as Linux's
//                  models ignore rtt_us < 0). Cause G1 of docs/validation.md.
//   EXP_PERSEGMENT IncreaseWindow is called once per ACKed segment, so that ns-3's growth
//                  counts ACKed segments as Linux does (tcp_slow_start: cwnd += acked;
//                  tcp_cong_avoid_ai: per ACKed packet) instead of once per ACK
//                  (TcpNewReno::SlowStart adds one segment per call). Cause G3.
//   EXP_SSTHRESH_CWND  GetSsThresh is given cwnd where ns-3 passes bytesInFlight: Linux's
//                  ssthresh functions all read tp->snd_cwnd (tcp_reno_ssthresh,
//                  tcp_yeah_ssthresh, tcp_veno_ssthresh, htcp_recalc_ssthresh, ...).
//   EXP_HTCP_ALPHA H-TCP's increase as Linux's htcp_cong_avoid: alpha/cwnd packets per ACKed
//                  packet (ns-3's TcpHtcp::CongestionAvoidance adds MSS^2/cwnd + alpha
//                  *bytes*, i.e. Reno plus a few bytes, whatever alpha is).
//   EXP_HTCP_BETA  H-TCP's beta as Linux's htcp_beta_update: beta = minRTT/maxRTT clamped to
//                  [0.5, 0.8] (BETA_MIN, BETA_MAX), unless the throughput moved by more than
//                  1/5 either way (ns-3: adapts only when it rose by at most 20 %, never
//                  clamps).
//   EXP_HTCP_ALPHA_LINUX  H-TCP's alpha as Linux's htcp_alpha_update: 2 x factor x (1 - beta)
//                  with no floor at 1 (ns-3's UpdateAlpha raises anything under 1 to 1, so with
//                  beta 0.8 ns-3 grows by 1 where Linux grows by 0.4), and the factor scaled
//                  by minRTT / 100 ms (use_rtt_scaling, integer, at least 1).
//   EXP_VEGAS_LOSS_SSTHRESH  Vegas's ssthresh on loss as Linux's: tcp_vegas.c registers
//                  .ssthresh = tcp_reno_ssthresh (max(cwnd / 2, 2)). ns-3's TcpVegas::GetSsThresh
//                  returns max(min(ssthresh, cwnd - 1 segment), 2 segments) on loss too (the
//                  tcp_vegas_ssthresh of Linux before 4.x, which Linux uses only inside Vegas's
//                  own adjustment): a loss barely reduces the window. The internal calls
//                  (GetSsThresh(tcb, 0) in TcpVegas::IncreaseWindow) are left as they are.
//   EXP_PERACK_CA  In congestion avoidance, IncreaseWindow is called with one segment per ACK,
//                  whatever the ACK covers: Linux's hstcp_cong_avoid (snd_cwnd_cnt += ai + 1)
//                  and hybla_cong_avoid (increment = rho2_7ls / cwnd) grow once per ACK, not
//                  per ACKed packet; ns-3's TcpHighSpeed and TcpHybla count segmentsAcked.
//   EXP_BIC_DELACK BIC's cnt divided by Linux's delayed-ACK ratio (bictcp_update:
//                  cnt = (cnt << ACK_RATIO_SHIFT) / delayed_ack; bictcp_acked keeps
//                  delayed_ack = 15/16 delayed_ack + pkts_acked, x16, in Open, from 2 x 16).
//                  ns-3's TcpBic has no such ratio.
//   exp-bic is ns-3 3.44's TcpBic on its public API (its members are private), line for line;
//   the EXP_BIC_* switches below change one thing each (ns-3 3.44 tcp-bic.cc against Linux
//   net/ipv4/tcp_bic.c and tcp_cong.c):
//   EXP_BIC_AI     The window grows as Linux's tcp_cong_avoid_ai(tp, ca->cnt, acked)
//                  (bictcp_cong_avoid): +1 once snd_cwnd_cnt >= cnt, the remainder kept, and
//                  snd_cwnd_cnt / cnt packets at once when acked allows; snd_cwnd_cnt reset on
//                  entering Recovery (tcp_init_cwnd_reduction) and Loss (tcp_enter_loss).
//                  ns-3's TcpBic::IncreaseWindow adds one segment when m_cWndCnt > cnt
//                  (strictly) and sets m_cWndCnt to 0, dropping the remainder, at most one
//                  segment per ACK, and never resets m_cWndCnt on a loss.
//   EXP_BIC_FASTCONV  Fast convergence as Linux's bictcp_recalc_ssthresh: last_max_cwnd =
//                  cwnd x (BICTCP_BETA_SCALE + beta) / (2 x BICTCP_BETA_SCALE) = 0.9 cwnd.
//                  ns-3's TcpBic::GetSsThresh sets m_lastMaxCwnd = Beta x cwnd = 0.8 cwnd,
//                  i.e. the new ssthresh itself.
//   EXP_BIC_BETA   ssthresh as Linux's bictcp_recalc_ssthresh: max(cwnd x 819 / 1024, 2)
//                  whole packets. ns-3: max(cwnd x 0.8, 2) x MSS in bytes (a fraction of a
//                  packet kept, 0.8 against 0.7998).
//   EXP_BIC_LOWWND low_window as Linux: bictcp_update uses cnt = cwnd when cwnd <= low_window
//                  and returns before the ACK ratio; bictcp_recalc_ssthresh gives
//                  max(cwnd >> 1, 2) when cwnd <= low_window. ns-3 tests cwnd < LowWnd and
//                  halves bytesInFlight (and EXP_BIC_DELACK alone scales that cnt too).
//   EXP_BIC_THROTTLE  bictcp_update returns early, keeping ca->cnt, when cwnd is unchanged and
//                  at most HZ/32 jiffies (31 ms at HZ = 1000) have passed since the last
//                  recomputation. ns-3's TcpBic::Update recomputes cnt on every ACK (with
//                  EXP_BIC_DELACK: with the ratio of that ACK).
//   EXP_BIC_LOSS_RESET  bictcp_state: on TCP_CA_Loss (an RTO) bictcp_reset clears
//                  last_max_cwnd, cnt, last_cwnd, last_time, epoch_start and sets delayed_ack
//                  back to 2 x 16. ns-3's TcpBic has no CongestionStateSet: after an RTO it
//                  keeps the W_max GetSsThresh just set.
//   EXP_VENO_CNTRTT  Veno's sample count is not reset on every ACK: Linux's
//                  tcp_veno_cong_avoid has the reset commented out (/* veno->cntrtt = 0; */),
//                  so after 3 samples Veno's own growth runs; ns-3's TcpVeno::IncreaseWindow
//                  resets m_cntRtt on every ACK, so m_cntRtt <= 2 always holds and it always
//                  grows as NewReno.
//   EXP_VENO_DIFF  Veno's backlog as Linux's tcp_veno_cong_avoid: diff = (cwnd << 1) -
//                  (cwnd x baseRTT << 1) / minRTT, half packets, against beta = 3 << 1; ns-3
//                  truncates target = cwnd x base / min to whole packets first.
//   For exp-veno, EXP_PERSEGMENT grows per ACKed segment inside Veno's IncreaseWindow: the
//   backlog is computed once per ACK, as Linux's tcp_veno_cong_avoid does, and only the
//   growth step is repeated (calling ns-3's IncreaseWindow once per segment would compute the
//   backlog again with the per-ACK minimum already reset, i.e. against an infinite RTT).
//   EXP_HS_MD_AI   HighSpeed's decrease as Linux's hstcp_ssthresh: b(w) from the table row
//                  ca->ai of the last congestion-avoidance increase (hstcp_cong_avoid moves ai
//                  only there; ai = 0, b = 1/2, until the first one), in Linux's fixed point
//                  (md / 256). ns-3's TcpHighSpeed::GetSsThresh looks b(w) up at the loss, from
//                  the window it is given: after slow start it cuts e.g. 780 packets by 0.34
//                  where Linux halves.
//   EXP_RTO_SSTHRESH  An RTO during fast recovery keeps the recovery's ssthresh, as Linux's
//                  tcp_enter_loss (a new ssthresh only if ca_state <= Disorder, or high_seq
//                  was reached, or a first timeout in Loss: "Reduce ssthresh if it has not yet
//                  been made inside this window"). ns-3's TcpSocketBase::ReTxTimeout calls
//                  GetSsThresh(inFlightBeforeRto) in Recovery too (RFC 5681's rule), i.e. a
//                  second reduction from the window PRR has already cut. The program restores
//                  the previous ssthresh in CwndEvent(CA_EVENT_LOSS), which ReTxTimeout calls
//                  right after GetSsThresh while m_congState is still CA_RECOVERY (the model's
//                  own side effects of that GetSsThresh call stay).
//   EXP_VEGAS_DIFF Vegas's once-per-RTT backlog as Linux's tcp_vegas_cong_avoid, on RTTs in us
//                  + 1 (tcp_vegas_pkts_acked): target_cwnd = cwnd x baseRTT / rtt and
//                  diff = cwnd x (rtt - baseRTT) / baseRTT, integer divisions. ns-3's
//                  TcpVegas::IncreaseWindow has diff = cwnd - (uint32)(cwnd x base / rtt), which
//                  is the paper's cwnd (rtt - base) / rtt rounded up: at cwnd 350, base 40.1 ms,
//                  rtt 40.3 ms it is 2 (> gamma = 1: leave slow start) where Linux's is 1.
//   EXP_VEGAS_AFTER  Vegas's round ends on the first ACK after(ack, beg_snd_nxt), strictly
//                  (tcp_vegas_cong_avoid); ns-3 tests m_lastAckedSeq >= m_begSndNxt.
//   EXP_YEAH_AFTER YeAH's round ends on the first ACK after(ack, beg_snd_nxt), strictly
//                  (tcp_yeah_cong_avoid); ns-3's TcpYeah::IncreaseWindow tests
//                  m_lastAckedSeq >= m_begSndNxt.
//   EXP_ILLINOIS_ALPHA_FRAC  Illinois's increase keeps alpha's fraction, as Linux's
//                  tcp_illinois_cong_avoid (alpha in 1/128: snd_cwnd_cnt += acked; delta =
//                  (snd_cwnd_cnt x alpha) >> 7; cwnd += delta / cwnd once delta >= cwnd).
//                  ns-3's TcpIllinois::IncreaseWindow does m_ackCnt += segmentsAcked x m_alpha
//                  on a uint32_t, which truncates every call: with 2 segments per ACK, alpha
//                  below 0.5 gives no growth at all, and alpha 1.3 grows as 1.
//   EXP_ILLINOIS_US  Illinois's da and dm in microseconds (tcp_illinois_acked keeps rtt_us;
//                  avg_delay, max_delay): ns-3's RecalcParam takes them with
//                  GetMilliSeconds(), whole ms, so an average queueing delay under 1 ms is 0.
//   EXP_HYBLA_RHO8 Hybla's rho in eighths, as Linux's hybla_recalc_param: rho_3ls =
//                  srtt_us / (rtt0 x 1000) with srtt_us = 8 x SRTT in us, integer division (at
//                  least 8), and 2^rho in slow start as (1 << rho) x hybla_fraction(rho_3ls & 7)
//                  (2^(k/8) x 128, a table); congestion avoidance then grows by rho^2 = rho2_7ls /
//                  128 (hybla_cong_avoid). ns-3's TcpHybla::RecalcParam keeps rho exact:
//                  minRtt / RRTT = 40 / 25 = 1.6 where Linux has 12 / 8 = 1.5, so its slow start
//                  adds 2^1.6 - 1 = 2.03 packets per ACK where Linux adds 1.83, and its
//                  congestion avoidance 2.56 / cwnd where Linux adds 2.25 / cwnd. exp-hybla is
//                  ns-3 3.44's TcpHybla on its public API (m_rho is private), line for line.
//   EXP_HYBLA_INIT Hybla computes rho when it starts, from the SRTT the handshake left, as
//                  Linux's hybla_init (hybla_recalc_param; ca->minrtt_us = tp->srtt_us), and
//                  again on every new minimum. ns-3's TcpHybla::PktsAcked recomputes rho only
//                  when the SRTT it is given equals the socket's minimum SRTT; the SYN-ACK's
//                  sample sets that minimum before the first PktsAcked, so when the data's SRTT
//                  stays above it (10 Mbps: the first data sample carries a 1.2 ms
//                  serialisation), rho keeps its initial 1.0 for the whole run and Hybla grows
//                  as NewReno. exp-hybla recomputes rho on its first PktsAcked call.
//   EXP_RTO_REARM  Every ACK that advances snd_una during fast recovery restarts the
//                  retransmission timer, as Linux's tcp_ack does for every ACK that acknowledges
//                  new data (tcp_clean_rtx_queue sets FLAG_SET_XMIT_TIMER on FLAG_ACKED; tcp_ack
//                  then calls tcp_set_xmit_timer -> tcp_rearm_rto). ns-3's
//                  TcpSocketBase::ProcessAck restarts it only on the first partial ACK of a
//                  recovery (NewAck(ackNumber, m_isFirstPartialAck): RFC 6582's "Impatient"
//                  variant), so a recovery that lasts longer than one RTO after its first
//                  partial ACK ends in an RTO although every ACK makes progress. The program sets
//                  the socket's m_isFirstPartialAck before each ACK is processed (the Rx trace
//                  runs at the top of DoForwardUp).
//   EXP_WESTWOOD_SSTHRESH  Westwood+'s bandwidth-based ssthresh when Linux applies it: on
//                  entering recovery ssthresh = tcp_reno_ssthresh (max(cwnd >> 1, 2) packets, of
//                  the value GetSsThresh is given: cwnd with EXP_SSTHRESH_CWND); when the
//                  reduction completes, ssthresh = cwnd = BWE x RTTmin, and after an RTO
//                  ssthresh = BWE x RTTmin (tcp_westwood_event: CA_EVENT_COMPLETE_CWR,
//                  CA_EVENT_LOSS; tcp_westwood_bw_rttmin: max(bw_est x rtt_min / mss, 2), whole
//                  packets). ns-3's TcpWestwoodPlus::GetSsThresh returns BWE x min RTT at the
//                  start of recovery and on RTO. ns-3 sends CA_EVENT_LOSS on every RTO, Linux
//                  only when tcp_enter_loss recomputes ssthresh, so the program acts on it only
//                  right after a GetSsThresh call (and not in Recovery with EXP_RTO_SSTHRESH).
//   EXP_WESTWOOD_FILTER  Westwood+'s bandwidth estimate as Linux's: per ACK (tcp_westwood_ack,
//                  slow path as ccsim: westwood_acked_count; a duplicate ACK counts one MSS,
//                  subtracted from a later cumulative ACK) the bytes acknowledged are summed
//                  into bk; the first ACK after more than max(RTT, 50 ms) of the window
//                  (westwood_update_window, TCP_WESTWOOD_RTT_MIN; RTT = the latest sample given
//                  to PktsAcked, in jiffies) takes the sample bk / delta in bytes per jiffy
//                  (HZ = 1000) and runs the two 7/8 EWMAs (westwood_filter: bw_ns_est, then
//                  bw_est; the first sample fills both). The window starts at the first
//                  transmission (tcp_westwood_init runs when the connection is established).
//                  ns-3's TcpWestwoodPlus counts ACKed segments over one RTT from the first ACK
//                  with an RTT, divides by that RTT, and filters with Tustin, alpha 0.9
//                  (EstimateBW); it skips ACKs with no RTT (0 with EXP_LINUXRTT).
//   EXP_WESTWOOD_MINRTT  Westwood+'s min RTT as Linux's: the minimum of the RTT samples given to
//                  PktsAcked (the SRTT without EXP_LINUXRTT), in jiffies
//                  (tcp_westwood_pkts_acked: usecs_to_jiffies, rounded up), updated on each ACK
//                  with the previous ACK's sample (update_rtt_min runs in tcp_westwood_ack, before
//                  pkts_acked) and restarted from the next sample after an RTO (CA_EVENT_LOSS:
//                  reset_rtt_min). ns-3 uses the socket's m_minRtt: the minimum SRTT since the
//                  handshake, never reset.
//   EXP_WESTWOOD_RENO_AI  exp-westwood's congestion avoidance as Linux's tcp_reno_cong_avoid ->
//                  tcp_cong_avoid_ai(tp, cwnd, acked): ACKed packets counted in snd_cwnd_cnt,
//                  cwnd + 1 packet per cwnd of them, the count zeroed when a reduction or an RTO
//                  starts (tcp_init_cwnd_reduction, tcp_enter_loss). ns-3's
//                  TcpNewReno::CongestionAvoidance adds static_cast<uint32_t>(MSS^2 / cwnd)
//                  bytes, dropping the fraction on every call: at 1448-byte segments and 300 to
//                  450 packets of window it grows 10 to 17 % slower than one packet per RTT.
//   EXP_EXIT_DELIVERED  On the ACK that ends fast recovery (or Loss), IncreaseWindow is given
//                  the packets that ACK newly delivered (tcb->m_lastAckedSackedBytes / MSS), as
//                  Linux's tcp_ack passes tcp_newly_delivered() to tcp_cong_control ->
//                  tcp_cong_avoid(sk, ack, acked_sacked). ns-3's ProcessAck passes
//                  (ackNumber - oldHeadSequence) / MSS: every segment SACKed during the
//                  recovery, counted again (hundreds at 100 Mbps). Harmless to ns-3's own
//                  counters that reset (TcpBic adds at most one segment per call), but with
//                  EXP_PERSEGMENT or EXP_BIC_AI it adds tens of packets per recovery. Not
//                  BIC's own code, but found with it (EXP_TRACE prints EXIT-ACK lines).
//   EXP_TRACE      Diagnostics only: every GetSsThresh call is printed on stderr (time, cwnd,
//                  bytes in flight and the ssthresh returned, in segments).
//
// Everything else is the dumbbell's, unchanged: the program includes dumbbell.cc.

#include "../../bench/ns3/ccsim-tcp.h"

#include <cstdlib>
#include <map>
#include <type_traits>

namespace
{
using namespace ns3;

bool
EnvOn(const char* name)
{
    const char* v = std::getenv(name);
    return v && std::string(v) == "1";
}

/// Linux tcp_cong_avoid_ai(tp, w, acked) (net/ipv4/tcp_cong.c) on an ns-3 window: the ACKed
/// packets count in `cnt` (snd_cwnd_cnt); cwnd + 1 packet once cnt >= w, the remainder kept,
/// several packets at once if `acked` allows. Returns the packets that second step added.
uint32_t
LinuxCongAvoidAi(Ptr<TcpSocketState> tcb, uint32_t w, uint32_t& cnt, uint32_t acked)
{
    const uint32_t seg = tcb->m_segmentSize;
    if (cnt >= w)
    {
        cnt = 0;
        tcb->m_cWnd += seg;
    }
    cnt += acked;
    uint32_t delta = 0;
    if (cnt >= w)
    {
        delta = cnt / w;
        cnt -= delta * w;
        tcb->m_cWnd += delta * seg;
    }
    return delta;
}

const bool kLinuxRtt = EnvOn("EXP_LINUXRTT");
const bool kPerSegment = EnvOn("EXP_PERSEGMENT");
const bool kSsthreshCwnd = EnvOn("EXP_SSTHRESH_CWND");
const bool kHtcpAlpha = EnvOn("EXP_HTCP_ALPHA");
const bool kHtcpBeta = EnvOn("EXP_HTCP_BETA");
const bool kVegasLossSsthresh = EnvOn("EXP_VEGAS_LOSS_SSTHRESH");
const bool kPerAckCa = EnvOn("EXP_PERACK_CA");
const bool kBicDelack = EnvOn("EXP_BIC_DELACK");
const bool kBicAi = EnvOn("EXP_BIC_AI");
const bool kBicFastConv = EnvOn("EXP_BIC_FASTCONV");
const bool kBicBeta = EnvOn("EXP_BIC_BETA");
const bool kBicLowWnd = EnvOn("EXP_BIC_LOWWND");
const bool kBicThrottle = EnvOn("EXP_BIC_THROTTLE");
const bool kBicLossReset = EnvOn("EXP_BIC_LOSS_RESET");
const bool kTrace = EnvOn("EXP_TRACE");
const bool kVenoCntRtt = EnvOn("EXP_VENO_CNTRTT");
const bool kVenoDiff = EnvOn("EXP_VENO_DIFF");
const bool kHsMdAi = EnvOn("EXP_HS_MD_AI");
const bool kRtoSsthresh = EnvOn("EXP_RTO_SSTHRESH");
const bool kVegasDiff = EnvOn("EXP_VEGAS_DIFF");
const bool kVegasAfter = EnvOn("EXP_VEGAS_AFTER");
const bool kYeahAfter = EnvOn("EXP_YEAH_AFTER");
const bool kIllinoisAlphaFrac = EnvOn("EXP_ILLINOIS_ALPHA_FRAC");
const bool kIllinoisUs = EnvOn("EXP_ILLINOIS_US");
const bool kHtcpAlphaLinux = EnvOn("EXP_HTCP_ALPHA_LINUX");
const bool kRtoRearm = EnvOn("EXP_RTO_REARM");
const bool kHyblaRho8 = EnvOn("EXP_HYBLA_RHO8");
const bool kHyblaInit = EnvOn("EXP_HYBLA_INIT");
const bool kWestwoodSsthresh = EnvOn("EXP_WESTWOOD_SSTHRESH");
const bool kWestwoodFilter = EnvOn("EXP_WESTWOOD_FILTER");
const bool kWestwoodMinRtt = EnvOn("EXP_WESTWOOD_MINRTT");
const bool kWestwoodRenoAi = EnvOn("EXP_WESTWOOD_RENO_AI");
const bool kExitDelivered = EnvOn("EXP_EXIT_DELIVERED");

/// Linux's per-ACK RTT sample for the congestion control (EXP_LINUXRTT): the newest segment
/// this ACK newly SACKed, else the newest it newly cumulatively ACKed, never a retransmitted
/// one (FlowTracer's logic in ccsim-tcp.h, kept per socket). The socket's Rx trace runs at the
/// top of TcpSocketBase::DoForwardUp, before ReceivedAck calls PktsAcked for the same ACK, so
/// the sample of the ACK being processed is in g_sample when PktsAcked runs.
Time g_sample;

struct RttSampler
{
    struct Seg
    {
        uint64_t end;
        Time sent;
        bool everRetx;
        bool sacked;
    };

    std::map<uint64_t, Seg> segs;
    uint64_t highTx = 0;
    bool started = false;

    uint64_t Unwrap(uint32_t v) const
    {
        const int32_t d = static_cast<int32_t>(v - static_cast<uint32_t>(highTx));
        return static_cast<uint64_t>(static_cast<int64_t>(highTx) + d);
    }

    void OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        const uint32_t len = p->GetSize();
        if (len == 0)
        {
            return;
        }
        const Time now = Simulator::Now();
        if (!started)
        {
            started = true;
            highTx = h.GetSequenceNumber().GetValue();
        }
        const uint64_t seq = Unwrap(h.GetSequenceNumber().GetValue());
        const uint64_t end = seq + len;
        if (seq >= highTx)
        {
            segs[seq] = Seg{end, now, false, false};
            highTx = end;
            return;
        }
        auto it = segs.upper_bound(seq);
        if (it != segs.begin())
        {
            --it;
        }
        for (; it != segs.end() && it->first < end; ++it)
        {
            if (it->second.end > seq)
            {
                it->second.everRetx = true;
            }
        }
        if (end > highTx)
        {
            segs[highTx] = Seg{end, now, false, false};
            highTx = end;
        }
    }

    void OnRx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        if (!started || p->GetSize() != 0 || !(h.GetFlags() & TcpHeader::ACK) ||
            (h.GetFlags() & TcpHeader::SYN))
        {
            return;
        }
        g_sample = Time(0);
        const Time now = Simulator::Now();
        const uint64_t ack = Unwrap(h.GetAckNumber().GetValue());
        bool haveSack = false;
        Time lastSack;
        if (h.HasOption(TcpOption::SACK))
        {
            Ptr<const TcpOptionSack> so =
                DynamicCast<const TcpOptionSack>(h.GetOption(TcpOption::SACK));
            for (const auto& blk : so->GetSackList())
            {
                const uint64_t l = Unwrap(blk.first.GetValue());
                const uint64_t r = Unwrap(blk.second.GetValue());
                for (auto it = segs.lower_bound(std::max(l, ack));
                     it != segs.end() && it->second.end <= r;
                     ++it)
                {
                    Seg& s = it->second;
                    if (!s.sacked)
                    {
                        s.sacked = true;
                        if (!s.everRetx && (!haveSack || s.sent > lastSack))
                        {
                            haveSack = true;
                            lastSack = s.sent;
                        }
                    }
                }
            }
        }
        bool haveCum = false;
        bool retransAcked = false;
        Time lastCum;
        while (!segs.empty() && segs.begin()->second.end <= ack)
        {
            const Seg& s = segs.begin()->second;
            if (s.everRetx)
            {
                retransAcked = true;
            }
            else if (!s.sacked && (!haveCum || s.sent > lastCum))
            {
                haveCum = true;
                lastCum = s.sent;
            }
            segs.erase(segs.begin());
        }
        if (haveSack)
        {
            g_sample = now - lastSack;
        }
        else if (haveCum && !retransAcked)
        {
            g_sample = now - lastCum;
        }
    }
};

std::map<const TcpSocketBase*, RttSampler> g_samplers;

template <class B>
struct ExpName;

class ExpVegasBase;

/// Classes that apply EXP_PERSEGMENT themselves (kOwnPerSegment).
template <class T, class = void>
struct OwnPerSegment : std::false_type
{
};

template <class T>
struct OwnPerSegment<T, std::void_t<decltype(T::kOwnPerSegment)>> : std::true_type
{
};

/// ns-3's class B with the EXP_* changes.
template <class B>
class Exp : public B
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId(ExpName<B>::value)
                                .template SetParent<B>()
                                .SetGroupName("Internet")
                                .template AddConstructor<Exp<B>>();
        return tid;
    }

    Exp() = default;

    Exp(const Exp& o)
        : B(o)
    {
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override
    {
        B::PktsAcked(tcb, segmentsAcked, kLinuxRtt ? g_sample : rtt);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        // EXP_EXIT_DELIVERED: the ACK that ends Recovery or Loss (ProcessAck calls this, then
        // IncreaseWindow for the same ACK)
        m_exitAck = newState == TcpSocketState::CA_OPEN &&
                    (tcb->m_congState == TcpSocketState::CA_RECOVERY ||
                     tcb->m_congState == TcpSocketState::CA_LOSS);
        B::CongestionStateSet(tcb, newState);
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (kExitDelivered && m_exitAck)
        {
            // tcp_ack: tcp_cong_control(sk, ack, tcp_newly_delivered(...)) -> tcp_cong_avoid(sk,
            // ack, acked_sacked): the packets this ACK newly delivered (ns-3 keeps the same
            // count in m_lastAckedSackedBytes), not ns-3's (ackNumber - oldHead) / MSS, which
            // counts every segment SACKed during the recovery again
            m_exitAck = false;
            segmentsAcked = tcb->m_lastAckedSackedBytes / tcb->m_segmentSize;
            if (kTrace)
            {
                std::cerr << "EXIT-ACK t=" << Simulator::Now().GetSeconds()
                          << " delivered=" << segmentsAcked << "\n";
            }
            if (segmentsAcked == 0)
            {
                return;
            }
        }
        m_exitAck = false;
        if constexpr (OwnPerSegment<B>::value)
        {
            B::IncreaseWindow(tcb, segmentsAcked); // the class applies EXP_PERSEGMENT itself
            return;
        }
        if (kPerAckCa && segmentsAcked > 1 && tcb->m_cWnd >= tcb->m_ssThresh)
        {
            B::IncreaseWindow(tcb, 1);
            return;
        }
        if (!kPerSegment || segmentsAcked <= 1)
        {
            B::IncreaseWindow(tcb, segmentsAcked);
            return;
        }
        for (uint32_t i = 0; i < segmentsAcked; ++i)
        {
            B::IncreaseWindow(tcb, 1);
        }
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t ev) override
    {
        if (kRtoSsthresh && ev == TcpSocketState::CA_EVENT_LOSS &&
            tcb->m_congState == TcpSocketState::CA_RECOVERY)
        {
            if (kTrace)
            {
                std::cerr << "RTO-IN-RECOVERY t=" << Simulator::Now().GetSeconds()
                          << " keep ssthresh=" << m_ssBefore / tcb->m_segmentSize << "\n";
            }
            tcb->m_ssThresh = m_ssBefore; // tcp_enter_loss: no second reduction
        }
        B::CwndEvent(tcb, ev);
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        m_ssBefore = tcb->m_ssThresh;
        if constexpr (std::is_same_v<B, ExpVegasBase>)
        {
            if (kVegasLossSsthresh && bytesInFlight != 0)
            {
                // the socket's call on loss (TcpVegas calls GetSsThresh(tcb, 0) itself)
                return std::max(tcb->m_cWnd.Get() / 2, 2 * tcb->m_segmentSize);
            }
        }
        const uint32_t ss =
            B::GetSsThresh(tcb, kSsthreshCwnd ? tcb->m_cWnd.Get() : bytesInFlight);
        if (kTrace)
        {
            std::cerr << "SSTHRESH t=" << Simulator::Now().GetSeconds() << " state="
                      << TcpSocketState::TcpCongStateName[tcb->m_congState]
                      << " cwnd=" << tcb->m_cWnd.Get() / tcb->m_segmentSize
                      << " inflight=" << bytesInFlight / tcb->m_segmentSize
                      << " ssthresh=" << ss / tcb->m_segmentSize << "\n";
        }
        return ss;
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<Exp<B>>(this);
    }

  private:
    uint32_t m_ssBefore{0}; // ssthresh before the last GetSsThresh call (EXP_RTO_SSTHRESH)
    bool m_exitAck{false};  // this ACK ends Recovery or Loss (EXP_EXIT_DELIVERED)
};

#define EXP_NAME(cls)                                                                              \
    template <>                                                                                    \
    struct ExpName<cls>                                                                            \
    {                                                                                              \
        static constexpr const char* value = "ns3::Exp" #cls;                                      \
    };

/// TcpBic with EXP_BIC_DELACK and the other EXP_BIC_* switches. TcpBic's members are private,
/// so this is ns-3 3.44's tcp-bic.cc (IncreaseWindow, Update, GetSsThresh) on the public API,
/// line for line, with the switches added; with none on it is ns-3's TcpBic (and with
/// EXP_BIC_DELACK alone, the wrapper this class replaced). It derives from TcpBic only to keep
/// its attributes (FastConvergence, Beta, MaxIncr, LowWnd, SmoothPart = 20 from algorithms.py,
/// BinarySearchCoefficient), read on first use.
class ExpBicBase : public TcpBic
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ExpBicBase")
                                .SetParent<TcpBic>()
                                .SetGroupName("Internet")
                                .AddConstructor<ExpBicBase>();
        return tid;
    }

    ExpBicBase() = default;
    ExpBicBase(const ExpBicBase&) = default;

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<ExpBicBase>(this);
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override
    {
        // bictcp_acked: delayed_ack += pkts_acked - delayed_ack >> ACK_RATIO_SHIFT, in Open
        if (tcb->m_congState == TcpSocketState::CA_OPEN)
        {
            m_delayedAck += segmentsAcked - (m_delayedAck >> 4);
        }
        TcpBic::PktsAcked(tcb, segmentsAcked, rtt);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        if (kBicLossReset && newState == TcpSocketState::CA_LOSS)
        {
            // bictcp_state: bictcp_reset on TCP_CA_Loss (tcp_enter_loss calls it after
            // ssthresh, as ns-3's ReTxTimeout calls this after GetSsThresh)
            m_cnt = 0;
            m_lastMaxCwnd = 0;
            m_lastCwnd = 0;
            m_lastTime = 0;
            m_epochStart = Time::Min();
            m_delayedAck = 2 << 4;
        }
        if (kBicAi && (newState == TcpSocketState::CA_RECOVERY ||
                       newState == TcpSocketState::CA_LOSS))
        {
            // tp->snd_cwnd_cnt = 0 in tcp_init_cwnd_reduction (entering Recovery) and in
            // tcp_enter_loss; ns-3's m_cWndCnt lives through both
            m_cWndCnt = 0;
        }
        TcpBic::CongestionStateSet(tcb, newState);
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (tcb->m_cWnd < tcb->m_ssThresh)
        {
            tcb->m_cWnd += tcb->m_segmentSize;
            segmentsAcked -= 1;
        }

        if (tcb->m_cWnd >= tcb->m_ssThresh && segmentsAcked > 0)
        {
            if (kBicAi)
            {
                // tcp_cong_avoid_ai(tp, ca->cnt, acked) after bictcp_update: cnt >= w (not >),
                // the remainder kept, several packets at once if acked allows
                const uint32_t w = std::max<uint32_t>(Update(tcb), 1);
                const uint32_t delta = LinuxCongAvoidAi(tcb, w, m_cWndCnt, segmentsAcked);
                if (kTrace && delta > 1)
                {
                    std::cerr << "BIC-MULTI t=" << Simulator::Now().GetSeconds()
                              << " acked=" << segmentsAcked << " cnt=" << w
                              << " added=" << delta << "\n";
                }
                return;
            }
            m_cWndCnt += segmentsAcked;
            uint32_t cnt = Update(tcb);
            if (m_cWndCnt > cnt)
            {
                tcb->m_cWnd += tcb->m_segmentSize;
                m_cWndCnt = 0;
            }
        }
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        Params();
        uint32_t segCwnd = tcb->GetCwndInSegments();
        uint32_t ssThresh = 0;

        m_epochStart = Time::Min();

        if (segCwnd < m_lastMaxCwnd && m_fastConvergence)
        {
            if (kBicFastConv)
            {
                // bictcp_recalc_ssthresh: cwnd * (BICTCP_BETA_SCALE + beta)
                // / (2 * BICTCP_BETA_SCALE), 0.9 cwnd with beta = 819 (ns-3: Beta x cwnd)
                m_lastMaxCwnd = segCwnd * (1024 + 819) / (2 * 1024);
            }
            else
            {
                m_lastMaxCwnd = static_cast<uint32_t>(m_beta * segCwnd);
            }
        }
        else
        {
            m_lastMaxCwnd = segCwnd;
        }

        if (kBicLowWnd ? segCwnd <= m_lowWnd : segCwnd < m_lowWnd)
        {
            // bictcp_recalc_ssthresh: cwnd <= low_window gives max(cwnd >> 1, 2) packets
            ssThresh = kBicLowWnd ? std::max<uint32_t>(segCwnd >> 1, 2) * tcb->m_segmentSize
                                  : std::max(2 * tcb->m_segmentSize, bytesInFlight / 2);
        }
        else if (kBicBeta)
        {
            // bictcp_recalc_ssthresh: max(cwnd * beta / BICTCP_BETA_SCALE, 2), whole packets,
            // beta = 819 (ns-3: cwnd x 0.8 in bytes, fraction of a packet kept)
            ssThresh = std::max<uint32_t>(segCwnd * 819 / 1024, 2) * tcb->m_segmentSize;
        }
        else
        {
            ssThresh =
                static_cast<uint32_t>(std::max(segCwnd * m_beta, 2.0) * tcb->m_segmentSize);
        }
        return ssThresh;
    }

  protected:
    uint32_t Update(Ptr<TcpSocketState> tcb) override
    {
        Params();
        uint32_t segCwnd = tcb->GetCwndInSegments();
        // tcp_jiffies32 at HZ = 1000 (ccsim's jiffies; only differences are used here)
        const auto nowJ = static_cast<uint32_t>(Simulator::Now().GetMilliSeconds());
        if (kBicThrottle && m_lastCwnd == segCwnd &&
            static_cast<int32_t>(nowJ - m_lastTime) <= 1000 / 32)
        {
            // bictcp_update: cnt is recomputed at most every HZ/32 while cwnd is unchanged
            return m_cnt;
        }
        m_lastCwnd = segCwnd;
        m_lastTime = nowJ;

        if (m_epochStart == Time::Min())
        {
            m_epochStart = Simulator::Now();
        }

        uint32_t cnt;
        if (kBicLowWnd ? segCwnd <= m_lowWnd : segCwnd < m_lowWnd)
        {
            cnt = segCwnd;
            if (kBicLowWnd)
            {
                // bictcp_update: "start off normal", cnt = cwnd returned before the ACK ratio
                m_cnt = cnt;
                return m_cnt;
            }
            m_cnt = Ratio(cnt);
            return m_cnt;
        }

        if (segCwnd < m_lastMaxCwnd)
        {
            double dist = (m_lastMaxCwnd - segCwnd) / m_b;
            if (dist > m_maxIncr)
            {
                cnt = segCwnd / m_maxIncr;
            }
            else if (dist <= 1)
            {
                cnt = (segCwnd * m_smoothPart) / m_b;
            }
            else
            {
                cnt = static_cast<uint32_t>(segCwnd / dist);
            }
        }
        else
        {
            if (segCwnd < m_lastMaxCwnd + m_b)
            {
                cnt = (segCwnd * m_smoothPart) / m_b;
            }
            else if (segCwnd < m_lastMaxCwnd + m_maxIncr * (m_b - 1))
            {
                cnt = (segCwnd * (m_b - 1)) / (segCwnd - m_lastMaxCwnd);
            }
            else
            {
                cnt = segCwnd / m_maxIncr;
            }
        }

        if (m_lastMaxCwnd == 0)
        {
            if (cnt > 20)
            {
                cnt = 20;
            }
        }

        if (cnt == 0)
        {
            cnt = 1;
        }
        m_cnt = Ratio(cnt);
        return m_cnt;
    }

  private:
    /// EXP_BIC_DELACK: bictcp_update's cnt = (cnt << ACK_RATIO_SHIFT) / delayed_ack, at least 1.
    uint32_t Ratio(uint32_t cnt) const
    {
        if (!kBicDelack || m_delayedAck == 0)
        {
            return cnt;
        }
        return std::max<uint32_t>(1, (cnt << 4) / m_delayedAck);
    }

    /// TcpBic's attributes (private in ns-3's class), read once.
    void Params()
    {
        if (m_paramsRead)
        {
            return;
        }
        m_paramsRead = true;
        BooleanValue fc;
        GetAttribute("FastConvergence", fc);
        m_fastConvergence = fc.Get();
        DoubleValue beta;
        GetAttribute("Beta", beta);
        m_beta = beta.Get();
        UintegerValue u;
        GetAttribute("MaxIncr", u);
        m_maxIncr = u.Get();
        GetAttribute("LowWnd", u);
        m_lowWnd = u.Get();
        GetAttribute("SmoothPart", u);
        m_smoothPart = u.Get();
        GetAttribute("BinarySearchCoefficient", u);
        m_b = static_cast<uint8_t>(u.Get());
    }

    // ns-3 3.44 TcpBic's state and its initial values
    uint32_t m_cWndCnt{0};
    uint32_t m_lastMaxCwnd{0};
    uint32_t m_lastCwnd{0};
    Time m_epochStart{Time::Min()};
    // TcpBic's attributes
    bool m_paramsRead{false};
    bool m_fastConvergence{true};
    double m_beta{0.8};
    uint32_t m_maxIncr{16};
    uint32_t m_lowWnd{14};
    uint32_t m_smoothPart{5};
    uint8_t m_b{4};
    // Linux's struct bictcp fields ns-3 lacks
    uint32_t m_delayedAck{2 << 4}; // EXP_BIC_DELACK
    uint32_t m_cnt{0};             // EXP_BIC_THROTTLE: the last cnt (after the ratio)
    uint32_t m_lastTime{0};        // EXP_BIC_THROTTLE: jiffies of the last recomputation
};

EXP_NAME(ExpBicBase)

/// TcpWestwoodPlus with EXP_WESTWOOD_SSTHRESH, EXP_WESTWOOD_FILTER and EXP_WESTWOOD_MINRTT.
/// With none of them on, every call goes to ns-3's TcpWestwoodPlus (its estimate, m_currentBW,
/// is protected, so no copy of its code is needed). Linux's state (struct westwood of
/// tcp_westwood.c, jiffies at HZ = 1000) is kept on every ACK whatever the switches; the
/// switches choose which estimate, which min RTT and which timing are used.
class ExpWestwoodBase : public TcpWestwoodPlus
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ExpWestwoodBase")
                                .SetParent<TcpWestwoodPlus>()
                                .SetGroupName("Internet")
                                .AddConstructor<ExpWestwoodBase>();
        return tid;
    }

    ExpWestwoodBase() = default;
    ExpWestwoodBase(const ExpWestwoodBase&) = default;

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<ExpWestwoodBase>(this);
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override
    {
        m_ssPending = false;
        LinuxAck(tcb);
        // tcp_westwood_pkts_acked: if (sample->rtt_us > 0) w->rtt = usecs_to_jiffies(rtt_us)
        const int64_t us = rtt.GetNanoSeconds() / 1000;
        if (us > 0)
        {
            m_rtt = static_cast<uint32_t>((us + 999) / 1000);
        }
        if (!kWestwoodFilter)
        {
            TcpWestwoodPlus::PktsAcked(tcb, segmentsAcked, rtt);
        }
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        m_ssPending = true;
        const uint32_t seg = tcb->m_segmentSize;
        if (kWestwoodSsthresh)
        {
            // .ssthresh = tcp_reno_ssthresh: max(tcp_snd_cwnd(tp) >> 1U, 2U)
            return std::max((bytesInFlight / seg) >> 1, 2U) * seg;
        }
        if (!kWestwoodFilter && !kWestwoodMinRtt)
        {
            return TcpWestwoodPlus::GetSsThresh(tcb, bytesInFlight);
        }
        return std::max(2 * seg, BwRttMinBytes(tcb)); // ns-3's formula on the chosen estimates
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t ev) override
    {
        const bool ssJustSet = m_ssPending; // this RTO recomputed ssthresh (ReTxTimeout)
        m_ssPending = false;
        if (ev == TcpSocketState::CA_EVENT_TX_START && !m_started)
        {
            // tcp_westwood_init (at connection establishment: the first transmission here)
            m_started = true;
            m_rttWinSx = Jiffies();
        }
        const bool lossEvent = ev == TcpSocketState::CA_EVENT_LOSS && ssJustSet &&
                               !(kRtoSsthresh && tcb->m_congState == TcpSocketState::CA_RECOVERY);
        if (kWestwoodSsthresh && ev == TcpSocketState::CA_EVENT_COMPLETE_CWR)
        {
            // tcp_westwood_event: tp->snd_ssthresh = tcp_westwood_bw_rttmin(sk); cwnd = ssthresh
            tcb->m_ssThresh = LinuxBwRttMin(tcb);
            tcb->m_cWnd = tcb->m_ssThresh.Get();
            Trace("COMPLETE_CWR", tcb);
        }
        if (lossEvent)
        {
            if (kWestwoodSsthresh)
            {
                tcb->m_ssThresh = LinuxBwRttMin(tcb); // tcp_westwood_event, CA_EVENT_LOSS
                Trace("LOSS", tcb);
            }
            m_resetRttMin = true; // "Update RTT_min when next ack arrives"
        }
        TcpWestwoodPlus::CwndEvent(tcb, ev);
    }

  protected:
    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (!kWestwoodRenoAi)
        {
            TcpWestwoodPlus::CongestionAvoidance(tcb, segmentsAcked);
            return;
        }
        // tcp_cong_avoid_ai(tp, tcp_snd_cwnd(tp), acked)
        const uint32_t w = std::max(tcb->m_cWnd.Get() / tcb->m_segmentSize, 1U);
        LinuxCongAvoidAi(tcb, w, m_cwndCnt, segmentsAcked);
    }

  public:
    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_RECOVERY || newState == TcpSocketState::CA_LOSS ||
            newState == TcpSocketState::CA_CWR)
        {
            m_cwndCnt = 0; // tcp_init_cwnd_reduction, tcp_enter_loss: tp->snd_cwnd_cnt = 0
        }
        TcpWestwoodPlus::CongestionStateSet(tcb, newState);
    }

  private:
    static uint32_t Jiffies()
    {
        return static_cast<uint32_t>(Simulator::Now().GetNanoSeconds() / 1000000);
    }

    /// tcp_westwood_ack, slow path (CA_ACK_SLOWPATH), as ccsim: westwood_update_window,
    /// westwood_acked_count, update_rtt_min. snd_una is the ACK being processed
    /// (ProcessAck sets m_lastAckedSeq before any PktsAcked call).
    void LinuxAck(Ptr<const TcpSocketState> tcb)
    {
        const uint32_t una = tcb->m_lastAckedSeq.GetValue();
        const uint32_t mss = tcb->m_segmentSize;
        // westwood_update_window
        const uint32_t now = Jiffies();
        const auto delta = static_cast<int32_t>(now - m_rttWinSx);
        if (m_firstAck)
        {
            m_sndUna = una;
            m_firstAck = false;
        }
        if (m_rtt && static_cast<uint32_t>(delta) > std::max<uint32_t>(m_rtt, kRttMin))
        {
            // westwood_filter
            const uint32_t sample = m_bk / static_cast<uint32_t>(delta);
            if (m_bwNsEst == 0 && m_bwEst == 0)
            {
                m_bwNsEst = sample;
                m_bwEst = m_bwNsEst;
            }
            else
            {
                m_bwNsEst = (7 * m_bwNsEst + sample) >> 3;
                m_bwEst = (7 * m_bwEst + m_bwNsEst) >> 3;
            }
            m_bk = 0;
            m_rttWinSx = now;
        }
        // westwood_acked_count
        uint32_t cumul = una - m_sndUna;
        if (!cumul)
        {
            m_accounted += mss; // a duplicate ACK
            cumul = mss;
        }
        if (cumul > mss)
        {
            if (m_accounted >= cumul)
            {
                m_accounted -= cumul;
                cumul = mss;
            }
            else
            {
                cumul -= m_accounted;
                m_accounted = 0;
            }
        }
        m_sndUna = una;
        m_bk += cumul;
        // update_rtt_min
        if (m_resetRttMin)
        {
            m_rttMin = m_rtt;
            m_resetRttMin = false;
        }
        else
        {
            m_rttMin = std::min(m_rttMin, m_rtt);
        }
    }

    /// BWE x min RTT in bytes, from the estimates the switches choose. Both Linux's: u32
    /// bw_est (bytes per jiffy) x rtt_min (jiffies), as tcp_westwood_bw_rttmin.
    uint32_t BwRttMinBytes(Ptr<const TcpSocketState> tcb) const
    {
        if (kWestwoodFilter && kWestwoodMinRtt)
        {
            return m_bwEst * m_rttMin;
        }
        const double bytesPerS =
            kWestwoodFilter ? m_bwEst * 1000.0 : m_currentBW.Get().GetBitRate() / 8.0;
        const double minRttS = kWestwoodMinRtt ? m_rttMin / 1000.0 : tcb->m_minRtt.GetSeconds();
        return static_cast<uint32_t>(bytesPerS * minRttS);
    }

    /// tcp_westwood_bw_rttmin: max(BWE x RTTmin / mss, 2) whole packets, in bytes.
    uint32_t LinuxBwRttMin(Ptr<const TcpSocketState> tcb) const
    {
        const uint32_t seg = tcb->m_segmentSize;
        return std::max(BwRttMinBytes(tcb) / seg, 2U) * seg;
    }

    void Trace(const char* what, Ptr<const TcpSocketState> tcb) const
    {
        if (kTrace)
        {
            std::cerr << "WESTWOOD " << what << " t=" << Simulator::Now().GetSeconds()
                      << " bw_est=" << m_bwEst << "B/ms ns3_bw=" << m_currentBW.Get().GetBitRate()
                      << "b/s rtt_min=" << m_rttMin << "ms ns3_min_rtt="
                      << tcb->m_minRtt.GetSeconds() * 1000 << "ms ssthresh="
                      << tcb->m_ssThresh.Get() / tcb->m_segmentSize << "\n";
        }
    }

    static constexpr uint32_t kRttMin = 50;        // TCP_WESTWOOD_RTT_MIN (HZ / 20), jiffies
    static constexpr uint32_t kInitRtt = 20 * 1000; // TCP_WESTWOOD_INIT_RTT (20 x HZ), jiffies

    uint32_t m_bwNsEst{0};      // first filter stage, bytes per jiffy
    uint32_t m_bwEst{0};        // bandwidth estimate, bytes per jiffy
    uint32_t m_rttWinSx{0};     // start of the sampling window, jiffies
    uint32_t m_bk{0};           // bytes acknowledged in the window
    uint32_t m_sndUna{0};       // snd_una at the previous ACK
    uint32_t m_accounted{0};    // bytes credited to duplicate ACKs
    uint32_t m_rtt{kInitRtt};    // latest RTT sample, jiffies
    uint32_t m_rttMin{kInitRtt}; // jiffies
    bool m_firstAck{true};
    bool m_resetRttMin{true};
    bool m_started{false};
    uint32_t m_cwndCnt{0}; // snd_cwnd_cnt (EXP_WESTWOOD_RENO_AI)
    bool m_ssPending{false}; // GetSsThresh was the last call (an RTO's CA_EVENT_LOSS follows)
};

EXP_NAME(TcpVegas)
EXP_NAME(ExpWestwoodBase)
EXP_NAME(TcpIllinois)
EXP_NAME(TcpBic)
EXP_NAME(TcpHighSpeed)
EXP_NAME(TcpScalable)
EXP_NAME(TcpHybla)
EXP_NAME(TcpVeno)
EXP_NAME(TcpYeah)
EXP_NAME(TcpLp)
EXP_NAME(TcpLinuxReno)

/// TcpHybla with EXP_HYBLA_RHO8 and EXP_HYBLA_INIT. TcpHybla's rho is private, so this is ns-3
/// 3.44's tcp-hybla.cc (PktsAcked, RecalcParam, SlowStart, CongestionAvoidance) on the public API,
/// line for line, with the switches added (and EXP_TRACE printing rho when it changes). It derives from TcpHybla only to keep its RRTT attribute
/// (set by algorithms.py to Linux's 25 ms).
class ExpHyblaBase : public TcpHybla
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ExpHyblaBase")
                                .SetParent<TcpHybla>()
                                .SetGroupName("Internet")
                                .AddConstructor<ExpHyblaBase>();
        return tid;
    }

    ExpHyblaBase() = default;
    ExpHyblaBase(const ExpHyblaBase&) = default;

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<ExpHyblaBase>(this);
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t, const Time& rtt) override
    {
        if (kHyblaInit && !m_initDone)
        {
            // hybla_init: rho from the SRTT after the handshake (here the socket's minimum
            // SRTT, which the SYN-ACK's sample set before any PktsAcked call)
            m_initDone = true;
            RecalcParam(tcb);
        }
        if (rtt == tcb->m_minRtt)
        {
            RecalcParam(tcb);
        }
    }

  protected:
    uint32_t SlowStart(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        NS_ASSERT(tcb->m_cWnd <= tcb->m_ssThresh);
        if (segmentsAcked >= 1)
        {
            double increment = std::pow(2, m_rho) - 1.0;
            if (kHyblaRho8)
            {
                // hybla_cong_avoid: ((1 << rho) * hybla_fraction(rho_fractions)) - 128, x128
                static const uint32_t kFraction[8] = {128, 139, 152, 165, 181, 197, 215, 234};
                const uint32_t rho = m_rho3ls >> 3;
                increment = (((1u << std::min(rho, 16u)) * kFraction[m_rho3ls & 7]) - 128) / 128.0;
            }
            auto incr = static_cast<uint32_t>(increment * tcb->m_segmentSize);
            tcb->m_cWnd = std::min(tcb->m_cWnd + incr, tcb->m_ssThresh);
            return segmentsAcked - 1;
        }
        return 0;
    }

    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        uint32_t segCwnd;
        double increment;
        while (segmentsAcked > 0)
        {
            segCwnd = tcb->GetCwndInSegments();
            // with EXP_HYBLA_RHO8, rho^2 = rho2_7ls / 128 exactly
            increment = std::pow(m_rho, 2) / static_cast<double>(segCwnd);
            m_cWndCnt += increment;
            segmentsAcked -= 1;
        }
        if (m_cWndCnt >= 1.0)
        {
            auto inc = static_cast<uint32_t>(m_cWndCnt);
            m_cWndCnt -= inc;
            tcb->m_cWnd += inc * tcb->m_segmentSize;
        }
    }

  private:
    void RecalcParam(const Ptr<TcpSocketState>& tcb)
    {
        if (m_rRtt.IsZero())
        {
            TimeValue v;
            GetAttribute("RRTT", v);
            m_rRtt = v.Get();
        }
        if (kHyblaRho8)
        {
            // hybla_recalc_param: rho_3ls = max(srtt_us / (rtt0 * USEC_PER_MSEC), 8), srtt_us
            // being 8 x SRTT in us; ns-3's input is its minimum SRTT (tcb->m_minRtt)
            const uint64_t srttUs8 = 8 * static_cast<uint64_t>(tcb->m_minRtt.GetMicroSeconds());
            m_rho3ls = std::max<uint64_t>(srttUs8 / (m_rRtt.GetMilliSeconds() * 1000), 8);
            m_rho = m_rho3ls / 8.0;
        }
        else
        {
            m_rho =
                std::max((double)tcb->m_minRtt.GetMilliSeconds() / m_rRtt.GetMilliSeconds(), 1.0);
        }
        if (kTrace && m_rho != m_rhoTraced)
        {
            m_rhoTraced = m_rho;
            std::cerr << "HYBLA-RHO t=" << Simulator::Now().GetSeconds() << " minRtt="
                      << tcb->m_minRtt.GetMicroSeconds() << "us rho=" << m_rho << "\n";
        }
    }

    double m_rho{1.0};      // ns-3's initial value
    double m_cWndCnt{0};
    uint32_t m_rho3ls{8};   // rho x 8 (EXP_HYBLA_RHO8)
    Time m_rRtt{Time(0)};   // TcpHybla's RRTT attribute, read on first use
    double m_rhoTraced{0};  // EXP_TRACE
    bool m_initDone{false}; // EXP_HYBLA_INIT
};

EXP_NAME(ExpHyblaBase)

/// TcpHtcp with EXP_HTCP_ALPHA / EXP_HTCP_BETA. The members it needs are private in ns-3's
/// class, so this is ns-3 3.44's tcp-htcp.cc with those two functions changed, on the
/// public API (TcpNewReno base), the rest line for line.
class ExpHtcpBase : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ExpHtcpBase")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<ExpHtcpBase>();
        return tid;
    }

    ExpHtcpBase() = default;
    ExpHtcpBase(const ExpHtcpBase&) = default;

    std::string GetName() const override
    {
        return "ExpHtcpBase";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<ExpHtcpBase>(this);
    }

    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (segmentsAcked == 0)
        {
            return;
        }
        if (kHtcpAlpha)
        {
            // htcp_cong_avoid: snd_cwnd_cnt += alpha (in 1/128) per ACKed packet... one
            // packet when it reaches cwnd: alpha/cwnd packets per ACKed packet, in bytes.
            const double add = m_alpha * tcb->m_segmentSize * tcb->m_segmentSize /
                               static_cast<double>(tcb->m_cWnd.Get()) * segmentsAcked;
            m_frac += add;
            const auto whole = static_cast<uint32_t>(m_frac);
            m_frac -= whole;
            tcb->m_cWnd += whole;
            return;
        }
        double adder = static_cast<double>(
            ((tcb->m_segmentSize * tcb->m_segmentSize) + (tcb->m_cWnd * m_alpha)) / tcb->m_cWnd);
        adder = std::max(1.0, adder);
        tcb->m_cWnd += static_cast<uint32_t>(adder);
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        m_lastCon = Simulator::Now();
        UpdateBeta();
        UpdateAlpha();
        uint32_t segWin = 2 * tcb->m_segmentSize;
        auto bFlight = static_cast<uint32_t>(bytesInFlight * m_beta);
        uint32_t ssThresh = std::max(segWin, bFlight);
        m_minRtt = Time::Max();
        m_maxRtt = Time::Min();
        m_lastThroughput = m_throughput;
        m_throughput = 0;
        m_dataSent = 0;
        return ssThresh;
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override
    {
        if (tcb->m_congState == TcpSocketState::CA_OPEN)
        {
            m_dataSent += segmentsAcked * tcb->m_segmentSize;
        }
        m_throughput = static_cast<uint32_t>(
            m_dataSent / (Simulator::Now().GetSeconds() - m_lastCon.GetSeconds()));
        UpdateAlpha();
        if (rtt.IsZero())
        {
            return; // no sample (EXP_LINUXRTT); ns-3's SRTT is never zero
        }
        if (rtt < m_minRtt)
        {
            m_minRtt = rtt;
        }
        m_minRttEver = std::min(m_minRttEver, rtt);
        if (rtt > m_maxRtt)
        {
            m_maxRtt = rtt;
        }
    }

  private:
    void UpdateAlpha()
    {
        m_delta = (Simulator::Now() - m_lastCon);
        if (m_delta <= m_deltaL)
        {
            m_alpha = 1;
        }
        else
        {
            Time diff = m_delta - m_deltaL;
            double diffSec = diff.GetSeconds();
            m_alpha = (1 + 10 * diffSec + 0.25 * (diffSec * diffSec));
        }
        if (kHtcpAlphaLinux)
        {
            // htcp_alpha_update: use_rtt_scaling (scale = 8 HZ / (10 minRTT) in [4, 80], i.e.
            // factor x minRTT / 100 ms for minRTT in [10, 200] ms, integer, at least 1), then
            // alpha = 2 factor (1 - beta) with no floor at 1 (ALPHA_BASE only if it is 0).
            double factor = std::floor(m_alpha);
            if (m_minRttEver < Time::Max() && m_minRttEver.IsStrictlyPositive())
            {
                const double scale =
                    std::clamp(std::floor(8000.0 / (10 * m_minRttEver.GetMilliSeconds())), 4.0, 80.0);
                factor = std::max(1.0, std::floor(factor * 8 / scale));
            }
            m_alpha = 2 * factor * (1 - m_beta);
            if (m_alpha <= 0)
            {
                m_alpha = 1;
            }
            return;
        }
        m_alpha = 2 * (1 - m_beta) * m_alpha;
        if (m_alpha < 1)
        {
            m_alpha = 1;
        }
    }

    void UpdateBeta()
    {
        m_beta = m_defaultBackoff;
        if (kHtcpBeta)
        {
            // htcp_beta_update with use_bandwidth_switch: a change of the throughput by more
            // than 1/5 either way keeps BETA_MIN; otherwise minRTT/maxRTT in [0.5, 0.8].
            if (m_lastThroughput > 0)
            {
                const double lo = m_lastThroughput * 0.8;
                const double hi = m_lastThroughput * 1.2;
                if (m_throughput < lo || m_throughput > hi)
                {
                    return;
                }
            }
            if (m_maxRtt > Time(0) && m_minRtt < Time::Max())
            {
                m_beta = std::clamp(m_minRtt.GetDouble() / m_maxRtt.GetDouble(), 0.5, 0.8);
            }
            return;
        }
        if (m_throughput > m_lastThroughput && m_lastThroughput > 0)
        {
            uint32_t diff = m_throughput - m_lastThroughput;
            if (diff / m_lastThroughput <= m_throughputRatio)
            {
                m_beta = m_minRtt.GetDouble() / m_maxRtt.GetDouble();
            }
        }
    }

    // ns-3 3.44 TcpHtcp's defaults (tcp-htcp.cc attributes)
    double m_alpha{0};
    double m_beta{0};
    double m_defaultBackoff{0.5};
    double m_throughputRatio{0.2};
    Time m_delta{0};
    Time m_deltaL{Seconds(1)};
    Time m_lastCon{0};
    Time m_minRtt{Time::Max()};
    Time m_maxRtt{Time::Min()};
    uint32_t m_throughput{0};
    uint32_t m_lastThroughput{0};
    uint32_t m_dataSent{0};
    double m_frac{0};
    Time m_minRttEver{Time::Max()}; // EXP_HTCP_ALPHA_LINUX: Linux's minRTT is never reset
};

EXP_NAME(ExpHtcpBase)

/// TcpVegas with EXP_VEGAS_DIFF and EXP_VEGAS_AFTER. Its members are private in ns-3's class,
/// so this is ns-3 3.44's tcp-vegas.cc on the public API (TcpNewReno base), line for line
/// where no switch is on (attribute defaults alpha 2, beta 4, gamma 1).
class ExpVegasBase : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ExpVegasBase")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<ExpVegasBase>();
        return tid;
    }

    ExpVegasBase() = default;

    ExpVegasBase(const ExpVegasBase& o)
        : TcpNewReno(o),
          m_baseRtt(o.m_baseRtt),
          m_minRtt(o.m_minRtt),
          m_cntRtt(o.m_cntRtt)
    {
    }

    std::string GetName() const override
    {
        return "ExpVegasBase";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<ExpVegasBase>(this);
    }

    void PktsAcked(Ptr<TcpSocketState>, uint32_t, const Time& rtt) override
    {
        if (rtt.IsZero())
        {
            return;
        }
        m_minRtt = std::min(m_minRtt, rtt);
        m_baseRtt = std::min(m_baseRtt, rtt);
        m_cntRtt++;
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_OPEN)
        {
            m_doingVegasNow = true;
            m_begSndNxt = tcb->m_nextTxSequence;
            m_cntRtt = 0;
            m_minRtt = Time::Max();
        }
        else
        {
            m_doingVegasNow = false;
        }
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (!m_doingVegasNow)
        {
            TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
            return;
        }
        const bool roundEnd = kVegasAfter ? tcb->m_lastAckedSeq > m_begSndNxt
                                          : tcb->m_lastAckedSeq >= m_begSndNxt;
        if (roundEnd)
        {
            m_begSndNxt = tcb->m_nextTxSequence;
            if (m_cntRtt <= 2)
            {
                TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
            }
            else
            {
                uint32_t diff;
                uint32_t targetCwnd;
                uint32_t segCwnd = tcb->GetCwndInSegments();
                if (kVegasDiff)
                {
                    // tcp_vegas_cong_avoid, RTTs as tcp_vegas_pkts_acked's rtt_us + 1
                    const uint64_t rtt = m_minRtt.GetMicroSeconds() + 1;
                    const uint64_t base = m_baseRtt.GetMicroSeconds() + 1;
                    targetCwnd = static_cast<uint32_t>(uint64_t{segCwnd} * base / rtt);
                    diff = static_cast<uint32_t>(uint64_t{segCwnd} * (rtt - base) / base);
                }
                else
                {
                    const double tmp = m_baseRtt.GetSeconds() / m_minRtt.GetSeconds();
                    targetCwnd = static_cast<uint32_t>(segCwnd * tmp);
                    diff = segCwnd - targetCwnd;
                }
                if (kTrace)
                {
                    std::cerr << "VEGAS t=" << Simulator::Now().GetSeconds() << " cwnd=" << segCwnd
                              << " ss=" << (tcb->m_cWnd < tcb->m_ssThresh)
                              << " base_us=" << m_baseRtt.GetMicroSeconds()
                              << " min_us=" << m_minRtt.GetMicroSeconds() << " diff=" << diff
                              << " target=" << targetCwnd << "\n";
                }
                if (diff > m_gamma && (tcb->m_cWnd < tcb->m_ssThresh))
                {
                    segCwnd = std::min(segCwnd, targetCwnd + 1);
                    tcb->m_cWnd = segCwnd * tcb->m_segmentSize;
                    tcb->m_ssThresh = GetSsThresh(tcb, 0);
                }
                else if (tcb->m_cWnd < tcb->m_ssThresh)
                {
                    TcpNewReno::SlowStart(tcb, segmentsAcked);
                }
                else
                {
                    if (diff > m_beta)
                    {
                        segCwnd--;
                        tcb->m_cWnd = segCwnd * tcb->m_segmentSize;
                        tcb->m_ssThresh = GetSsThresh(tcb, 0);
                    }
                    else if (diff < m_alpha)
                    {
                        segCwnd++;
                        tcb->m_cWnd = segCwnd * tcb->m_segmentSize;
                    }
                }
                tcb->m_ssThresh = std::max(tcb->m_ssThresh, 3 * tcb->m_cWnd / 4);
            }
            m_cntRtt = 0;
            m_minRtt = Time::Max();
        }
        else if (tcb->m_cWnd < tcb->m_ssThresh)
        {
            TcpNewReno::SlowStart(tcb, segmentsAcked);
        }
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t) override
    {
        return std::max(std::min(tcb->m_ssThresh.Get(), tcb->m_cWnd.Get() - tcb->m_segmentSize),
                        2 * tcb->m_segmentSize);
    }

  private:
    uint32_t m_alpha{2};
    uint32_t m_beta{4};
    uint32_t m_gamma{1};
    Time m_baseRtt{Time::Max()};
    Time m_minRtt{Time::Max()};
    uint32_t m_cntRtt{0};
    bool m_doingVegasNow{true};
    SequenceNumber32 m_begSndNxt{0};
};

EXP_NAME(ExpVegasBase)

/// TcpYeah with EXP_YEAH_AFTER. Its members are private in ns-3's class, so this is ns-3
/// 3.44's tcp-yeah.cc on the public API (TcpNewReno base), line for line where the switch is
/// off (attribute defaults: alpha 80, gamma 1, delta 3, epsilon 1, phy 8, rho 16, zeta 50;
/// the Scalable inside gets AIFactor 100 in the constructor, as in ns-3).
class ExpYeahBase : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ExpYeahBase")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<ExpYeahBase>();
        return tid;
    }

    ExpYeahBase()
    {
        m_stcp = CreateObject<TcpScalable>();
        m_stcp->SetAttribute("AIFactor", UintegerValue(m_stcpAiFactor));
    }

    ExpYeahBase(const ExpYeahBase& o)
        : TcpNewReno(o),
          m_baseRtt(o.m_baseRtt),
          m_minRtt(o.m_minRtt),
          m_cntRtt(o.m_cntRtt),
          m_begSndNxt(o.m_begSndNxt),
          m_lastQ(o.m_lastQ),
          m_doingRenoNow(o.m_doingRenoNow),
          m_renoCount(o.m_renoCount),
          m_fastCount(o.m_fastCount)
    {
        m_stcp = CopyObject(o.m_stcp);
    }

    std::string GetName() const override
    {
        return "ExpYeahBase";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<ExpYeahBase>(this);
    }

    void PktsAcked(Ptr<TcpSocketState>, uint32_t, const Time& rtt) override
    {
        if (rtt.IsZero())
        {
            return;
        }
        m_minRtt = std::min(m_minRtt, rtt);
        m_baseRtt = std::min(m_baseRtt, rtt);
        m_cntRtt++;
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_OPEN)
        {
            m_begSndNxt = tcb->m_nextTxSequence;
            m_cntRtt = 0;
            m_minRtt = Time::Max();
        }
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (tcb->m_cWnd < tcb->m_ssThresh)
        {
            TcpNewReno::SlowStart(tcb, segmentsAcked);
        }
        else if (!m_doingRenoNow)
        {
            m_stcp->IncreaseWindow(tcb, segmentsAcked);
        }
        else
        {
            TcpNewReno::CongestionAvoidance(tcb, segmentsAcked);
        }
        const bool roundEnd = kYeahAfter ? tcb->m_lastAckedSeq > m_begSndNxt
                                         : tcb->m_lastAckedSeq >= m_begSndNxt;
        if (roundEnd)
        {
            if (m_cntRtt > 2)
            {
                uint32_t segCwnd = tcb->GetCwndInSegments();
                Time rttQueue = m_minRtt - m_baseRtt;
                double bw = segCwnd / m_minRtt.GetSeconds();
                auto queue = static_cast<uint32_t>(bw * rttQueue.GetSeconds());
                double L = rttQueue.GetSeconds() / m_baseRtt.GetSeconds();
                if (queue > m_alpha || L > (1 / m_phy))
                {
                    if (queue > m_alpha && segCwnd > m_renoCount)
                    {
                        uint32_t reduction = std::min(queue / m_gamma, segCwnd >> m_epsilon);
                        segCwnd -= reduction;
                        segCwnd = std::max(segCwnd, m_renoCount);
                        tcb->m_cWnd = segCwnd * tcb->m_segmentSize;
                        tcb->m_ssThresh = tcb->m_cWnd;
                    }
                    if (m_renoCount <= 2)
                    {
                        m_renoCount = std::max(segCwnd >> 1, static_cast<uint32_t>(2));
                    }
                    else
                    {
                        m_renoCount++;
                    }
                    m_doingRenoNow = m_doingRenoNow + 1;
                }
                else
                {
                    m_fastCount++;
                    if (m_fastCount > m_zeta)
                    {
                        m_renoCount = 2;
                        m_fastCount = 0;
                    }
                    m_doingRenoNow = 0;
                }
                m_lastQ = queue;
            }
            m_begSndNxt = tcb->m_nextTxSequence;
            m_cntRtt = 0;
            m_minRtt = Time::Max();
        }
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        uint32_t reduction;
        uint32_t segBytesInFlight = bytesInFlight / tcb->m_segmentSize;
        if (m_doingRenoNow < m_rho)
        {
            reduction = m_lastQ;
            reduction = std::max(reduction, segBytesInFlight >> m_delta);
            reduction = std::min(reduction, std::max(segBytesInFlight >> 1, 2U));
        }
        else
        {
            reduction = std::max(segBytesInFlight >> 1, static_cast<uint32_t>(2));
        }
        m_fastCount = 0;
        m_renoCount = std::max(m_renoCount >> 1, static_cast<uint32_t>(2));
        return std::max(bytesInFlight - (reduction * tcb->m_segmentSize),
                        2U * tcb->m_segmentSize);
    }

  private:
    uint32_t m_alpha{80};
    uint32_t m_gamma{1};
    uint32_t m_delta{3};
    uint32_t m_epsilon{1};
    uint32_t m_phy{8};
    uint32_t m_rho{16};
    uint32_t m_zeta{50};
    uint32_t m_stcpAiFactor{100};
    Ptr<TcpScalable> m_stcp;
    Time m_baseRtt{Time::Max()};
    Time m_minRtt{Time::Max()};
    uint32_t m_cntRtt{0};
    SequenceNumber32 m_begSndNxt{0};
    uint32_t m_lastQ{0};
    uint32_t m_doingRenoNow{0};
    uint32_t m_renoCount{2};
    uint32_t m_fastCount{0};
};

EXP_NAME(ExpYeahBase)

/// TcpIllinois with EXP_ILLINOIS_ALPHA_FRAC and EXP_ILLINOIS_US. Its members are private in
/// ns-3's class, so this is ns-3 3.44's tcp-illinois.cc on the public API (TcpNewReno base),
/// line for line where no switch is on (attribute defaults as its constructor).
class ExpIllinoisBase : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ExpIllinoisBase")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<ExpIllinoisBase>();
        return tid;
    }

    ExpIllinoisBase() = default;
    ExpIllinoisBase(const ExpIllinoisBase&) = default;

    std::string GetName() const override
    {
        return "ExpIllinoisBase";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<ExpIllinoisBase>(this);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_LOSS)
        {
            m_alpha = m_alphaBase;
            m_beta = m_betaBase;
            m_rttLow = 0;
            m_rttAbove = false;
            Reset(tcb->m_nextTxSequence);
        }
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (tcb->m_lastAckedSeq >= m_endSeq)
        {
            RecalcParam(tcb->m_cWnd);
            Reset(tcb->m_nextTxSequence);
        }
        if (tcb->m_cWnd < tcb->m_ssThresh)
        {
            TcpNewReno::SlowStart(tcb, segmentsAcked);
            return;
        }
        uint32_t segCwnd = tcb->GetCwndInSegments();
        const uint32_t oldCwnd = segCwnd;
        if (kIllinoisAlphaFrac)
        {
            // tcp_illinois_cong_avoid, alpha in 1/128 (ALPHA_SHIFT 7)
            m_cwndCnt += segmentsAcked;
            const uint64_t delta = (uint64_t{m_cwndCnt} * static_cast<uint32_t>(m_alpha * 128)) >> 7;
            if (delta >= segCwnd)
            {
                segCwnd += static_cast<uint32_t>(delta / segCwnd);
                m_cwndCnt = 0;
            }
        }
        else
        {
            if (segmentsAcked > 0)
            {
                m_ackCnt += segmentsAcked * m_alpha;
            }
            while (m_ackCnt >= segCwnd)
            {
                m_ackCnt -= segCwnd;
                segCwnd += 1;
            }
        }
        if (segCwnd != oldCwnd)
        {
            tcb->m_cWnd = segCwnd * tcb->m_segmentSize;
        }
    }

    void PktsAcked(Ptr<TcpSocketState>, uint32_t, const Time& rtt) override
    {
        if (rtt.IsZero())
        {
            return;
        }
        m_baseRtt = std::min(m_baseRtt, rtt);
        m_maxRtt = std::max(rtt, m_maxRtt);
        ++m_cntRtt;
        m_sumRtt += rtt;
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        uint32_t segBytesInFlight = bytesInFlight / tcb->m_segmentSize;
        auto ssThresh = static_cast<uint32_t>(std::max(2.0, (1.0 - m_beta) * segBytesInFlight));
        return ssThresh * tcb->m_segmentSize;
    }

  private:
    void RecalcParam(uint32_t cWnd)
    {
        if (cWnd < m_winThresh) // (bytes against segments, as ns-3)
        {
            m_alpha = m_alphaBase;
            m_beta = m_betaBase;
        }
        else if (m_cntRtt > 0)
        {
            const Time dmT = m_maxRtt - m_baseRtt;
            const Time daT = m_sumRtt / m_cntRtt - m_baseRtt;
            const double dm = kIllinoisUs ? dmT.GetMicroSeconds() / 1000.0
                                          : static_cast<double>(dmT.GetMilliSeconds());
            const double da = kIllinoisUs ? daT.GetMicroSeconds() / 1000.0
                                          : static_cast<double>(daT.GetMilliSeconds());
            CalculateAlpha(da, dm);
            CalculateBeta(da, dm);
        }
    }

    void CalculateAlpha(double da, double dm)
    {
        double d1 = dm / 100;
        if (da <= d1)
        {
            if (!m_rttAbove)
            {
                m_alpha = m_alphaMax;
            }
            if (++m_rttLow >= m_theta)
            {
                m_rttLow = 0;
                m_rttAbove = false;
                m_alpha = m_alphaMax;
            }
        }
        else
        {
            m_rttAbove = true;
            dm -= d1;
            da -= d1;
            m_alpha = (dm * m_alphaMax) / (dm + (da * (m_alphaMax - m_alphaMin)) / m_alphaMin);
        }
    }

    void CalculateBeta(double da, double dm)
    {
        double d2 = dm / 10;
        double d3 = (8 * dm) / 10;
        if (da <= d2)
        {
            m_beta = m_betaMin;
        }
        else if (da > d2 && da < d3)
        {
            m_beta = (m_betaMin * d3 - m_betaMax * d2 + (m_betaMax - m_betaMin) * da) / (d3 - d2);
        }
        else if (da >= d3 || d3 <= d2)
        {
            m_beta = m_betaMax;
        }
    }

    void Reset(const SequenceNumber32& nextTxSequence)
    {
        m_endSeq = nextTxSequence;
        m_cntRtt = 0;
        m_sumRtt = Time(0);
    }

    Time m_sumRtt{0};
    uint32_t m_cntRtt{0};
    Time m_baseRtt{Time::Max()};
    Time m_maxRtt{Time::Min()};
    SequenceNumber32 m_endSeq{0};
    bool m_rttAbove{false};
    uint8_t m_rttLow{0};
    double m_alphaMin{0.3};
    double m_alphaMax{10.0};
    double m_alphaBase{1.0};
    double m_alpha{10.0};
    double m_betaMin{0.125};
    double m_betaMax{0.5};
    double m_betaBase{0.5};
    double m_beta{0.5};
    uint32_t m_winThresh{15};
    uint32_t m_theta{5};
    uint32_t m_ackCnt{0};
    uint32_t m_cwndCnt{0}; // EXP_ILLINOIS_ALPHA_FRAC: Linux's snd_cwnd_cnt
};

EXP_NAME(ExpIllinoisBase)

/// TcpHighSpeed with EXP_HS_MD_AI.
class ExpHighSpeedBase : public TcpHighSpeed
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ExpHighSpeedBase")
                                .SetParent<TcpHighSpeed>()
                                .SetGroupName("Internet")
                                .AddConstructor<ExpHighSpeedBase>();
        return tid;
    }

    ExpHighSpeedBase() = default;
    ExpHighSpeedBase(const ExpHighSpeedBase&) = default;

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<ExpHighSpeedBase>(this);
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        if (!kHsMdAi)
        {
            return TcpHighSpeed::GetSsThresh(tcb, bytesInFlight);
        }
        // hstcp_ssthresh: max(cwnd - ((cwnd * hstcp_aimd_vals[ca->ai].md) >> 8), 2)
        const uint32_t w = bytesInFlight / tcb->m_segmentSize;
        const uint32_t ss = std::max<uint32_t>(w - ((w * kMd[m_ai]) >> 8), 2);
        return ss * tcb->m_segmentSize;
    }

  protected:
    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        // hstcp_cong_avoid: hstcp_aimd_vals[ai - 1].cwnd < cwnd <= hstcp_aimd_vals[ai].cwnd
        const uint32_t w = tcb->GetCwndInSegments();
        while (w > kCwnd[m_ai] && m_ai < kRows - 1)
        {
            ++m_ai;
        }
        while (m_ai > 0 && w <= kCwnd[m_ai - 1])
        {
            --m_ai;
        }
        TcpHighSpeed::CongestionAvoidance(tcb, segmentsAcked);
    }

  private:
    // Linux tcp_highspeed.c hstcp_aimd_vals (RFC 3649 appendix B): cwnd bound, md x 256
    static constexpr uint32_t kRows = 72;
    static constexpr uint32_t kCwnd[kRows] = {
        38,    118,   221,   347,   495,   663,   851,   1058,  1284,  1529,  1793,  2076,
        2378,  2699,  3039,  3399,  3778,  4177,  4596,  5036,  5497,  5979,  6483,  7009,
        7558,  8130,  8726,  9346,  9991,  10661, 11358, 12082, 12834, 13614, 14424, 15265,
        16137, 17042, 17981, 18955, 19965, 21013, 22101, 23230, 24402, 25618, 26881, 28193,
        29557, 30975, 32450, 33986, 35586, 37253, 38992, 40808, 42707, 44694, 46776, 48961,
        51258, 53677, 56230, 58932, 61799, 64851, 68113, 71617, 75401, 79517, 84035, 89053};
    static constexpr uint32_t kMd[kRows] = {
        128, 112, 104, 98, 93, 89, 86, 83, 81, 78, 76, 74, 72, 71, 69, 68, 66, 65,
        64,  62,  61,  60, 59, 58, 57, 56, 55, 54, 53, 52, 52, 51, 50, 49, 48, 48,
        47,  46,  45,  45, 44, 43, 43, 42, 41, 41, 40, 39, 39, 38, 38, 37, 36, 36,
        35,  35,  34,  33, 33, 32, 32, 31, 30, 30, 29, 28, 28, 27, 26, 26, 25, 24};
    uint32_t m_ai{0};
};

EXP_NAME(ExpHighSpeedBase)

/// TcpVeno with EXP_VENO_CNTRTT, EXP_VENO_DIFF and its own EXP_PERSEGMENT. Its members are
/// private in ns-3's class, so this is ns-3 3.44's tcp-veno.cc on the public API (TcpNewReno
/// base), line for line where no switch is on.
class ExpVenoBase : public TcpNewReno
{
  public:
    static constexpr bool kOwnPerSegment = true;

    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ExpVenoBase")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<ExpVenoBase>();
        return tid;
    }

    ExpVenoBase() = default;
    ExpVenoBase(const ExpVenoBase&) = default;

    std::string GetName() const override
    {
        return "ExpVenoBase";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<ExpVenoBase>(this);
    }

    void PktsAcked(Ptr<TcpSocketState>, uint32_t, const Time& rtt) override
    {
        if (rtt.IsZero())
        {
            return;
        }
        m_minRtt = std::min(m_minRtt, rtt);
        m_baseRtt = std::min(m_baseRtt, rtt);
        m_cntRtt++;
    }

    void CongestionStateSet(Ptr<TcpSocketState>, const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_OPEN)
        {
            m_doingVenoNow = true;
            m_minRtt = Time::Max();
        }
        else
        {
            m_doingVenoNow = false;
        }
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        const uint32_t segCwnd = tcb->GetCwndInSegments();
        if (kVenoDiff)
        {
            // tcp_veno_cong_avoid: target_cwnd = (cwnd x basertt << V_PARAM_SHIFT) / rtt;
            // diff = (cwnd << V_PARAM_SHIFT) - target_cwnd (u32), against beta = 3 << 1.
            const double t = (static_cast<double>(segCwnd) * m_baseRtt.GetDouble() * 2) /
                             m_minRtt.GetDouble();
            m_diff2 = (segCwnd << 1) - static_cast<uint32_t>(t);
        }
        else
        {
            const double tmp = m_baseRtt.GetSeconds() / m_minRtt.GetSeconds();
            const auto targetCwnd = static_cast<uint32_t>(segCwnd * tmp);
            m_diff2 = (segCwnd - targetCwnd) << 1;
        }
        const uint32_t n = kPerSegment ? segmentsAcked : 1;
        const uint32_t arg = kPerSegment ? 1 : segmentsAcked;
        if (!m_doingVenoNow)
        {
            for (uint32_t i = 0; i < n; ++i)
            {
                TcpNewReno::IncreaseWindow(tcb, arg);
            }
            return; // as ns-3 (and Linux): no reset of the per-ACK minimum
        }
        if (m_cntRtt <= 2)
        {
            for (uint32_t i = 0; i < n; ++i)
            {
                TcpNewReno::IncreaseWindow(tcb, arg);
            }
        }
        else if (tcb->m_cWnd < tcb->m_ssThresh)
        {
            for (uint32_t i = 0; i < n; ++i)
            {
                TcpNewReno::SlowStart(tcb, arg);
            }
        }
        else
        {
            for (uint32_t i = 0; i < n; ++i)
            {
                if (m_diff2 < 2 * m_beta)
                {
                    TcpNewReno::CongestionAvoidance(tcb, arg);
                }
                else if (m_inc)
                {
                    TcpNewReno::CongestionAvoidance(tcb, arg);
                    m_inc = false;
                }
                else
                {
                    m_inc = true;
                }
            }
        }
        if (!kVenoCntRtt)
        {
            m_cntRtt = 0;
        }
        m_minRtt = Time::Max();
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        if (m_diff2 < 2 * m_beta)
        {
            return std::max(static_cast<uint32_t>(bytesInFlight * (4.0 / 5.0)),
                            2 * tcb->m_segmentSize);
        }
        return TcpNewReno::GetSsThresh(tcb, bytesInFlight);
    }

  private:
    // ns-3 3.44 TcpVeno's initial values; Beta is its attribute default (3 packets)
    Time m_baseRtt{Time::Max()};
    Time m_minRtt{Time::Max()};
    uint32_t m_cntRtt{0};
    bool m_doingVenoNow{true};
    uint32_t m_diff2{0}; // the backlog in half packets (ns-3's m_diff x 2 without EXP_VENO_DIFF)
    bool m_inc{true};
    uint32_t m_beta{3};
};

EXP_NAME(ExpVenoBase)

template <class B>
std::string
Reg()
{
    return Exp<B>::GetTypeId().GetName();
}

std::string
ExpCcTypeName(const std::string& cc)
{
    static const std::map<std::string, std::string (*)()> exp = {
        {"exp-vegas", &Reg<ExpVegasBase>},
        {"exp-westwood", &Reg<ExpWestwoodBase>},
        {"exp-illinois", &Reg<ExpIllinoisBase>},
        {"exp-htcp", &Reg<ExpHtcpBase>},
        {"exp-bic", &Reg<ExpBicBase>},
        {"exp-highspeed", &Reg<ExpHighSpeedBase>},
        {"exp-scalable", &Reg<TcpScalable>},
        {"exp-hybla", &Reg<ExpHyblaBase>},
        {"exp-veno", &Reg<ExpVenoBase>},
        {"exp-yeah", &Reg<ExpYeahBase>},
        {"exp-lp", &Reg<TcpLp>},
        {"exp-linuxreno", &Reg<TcpLinuxReno>},
    };
    auto it = exp.find(cc);
    if (it != exp.end())
    {
        return it->second();
    }
    return CcTypeName(cc);
}

// TcpSocketBase::m_isFirstPartialAck is protected; a pointer to the member, formed through a
// derived class, reaches it (as RateOpsAccess in ccsim-tcp.h).
struct PartialAckAccess : public TcpSocketBase
{
    static bool TcpSocketBase::*Member()
    {
        return &PartialAckAccess::m_isFirstPartialAck;
    }
};

/// EXP_RTO_REARM: before the socket processes an ACK, mark the next partial ACK as the
/// "first", so that ProcessAck's NewAck(ackNumber, m_isFirstPartialAck) restarts the
/// retransmission timer on every partial ACK (Linux: tcp_ack -> tcp_set_xmit_timer ->
/// tcp_rearm_rto whenever tcp_clean_rtx_queue acknowledged data). Outside recovery the
/// member is not read.
void
RearmOnPartialAck(TcpSocketBase* sock, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    sock->*(PartialAckAccess::Member()) = true;
}

/// ConnectFlowTracer, plus this socket's RttSampler (EXP_LINUXRTT).
void
ExpConnectFlowTracer(Ptr<BulkSendApplication> app, FlowTracer* tr, bool linuxRateSampler)
{
    ConnectFlowTracer(app, tr, linuxRateSampler);
    Ptr<TcpSocketBase> sock = DynamicCast<TcpSocketBase>(app->GetSocket());
    RttSampler* s = &g_samplers[PeekPointer(sock)];
    sock->TraceConnectWithoutContext("Tx", MakeCallback(&RttSampler::OnTx, s));
    sock->TraceConnectWithoutContext("Rx", MakeCallback(&RttSampler::OnRx, s));
    if (kRtoRearm)
    {
        sock->TraceConnectWithoutContext("Rx",
                                         MakeBoundCallback(&RearmOnPartialAck, PeekPointer(sock)));
    }
}

} // namespace

#define CcTypeName ExpCcTypeName
#define ConnectFlowTracer ExpConnectFlowTracer
#include "../../bench/ns3/dumbbell.cc"
