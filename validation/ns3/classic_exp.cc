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

const bool kLinuxRtt = EnvOn("EXP_LINUXRTT");
const bool kPerSegment = EnvOn("EXP_PERSEGMENT");
const bool kSsthreshCwnd = EnvOn("EXP_SSTHRESH_CWND");
const bool kHtcpAlpha = EnvOn("EXP_HTCP_ALPHA");
const bool kHtcpBeta = EnvOn("EXP_HTCP_BETA");
const bool kVegasLossSsthresh = EnvOn("EXP_VEGAS_LOSS_SSTHRESH");
const bool kPerAckCa = EnvOn("EXP_PERACK_CA");
const bool kBicDelack = EnvOn("EXP_BIC_DELACK");

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

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
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

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        if constexpr (std::is_same_v<B, TcpVegas>)
        {
            if (kVegasLossSsthresh && bytesInFlight != 0)
            {
                // the socket's call on loss (TcpVegas calls GetSsThresh(tcb, 0) itself)
                return std::max(tcb->m_cWnd.Get() / 2, 2 * tcb->m_segmentSize);
            }
        }
        return B::GetSsThresh(tcb, kSsthreshCwnd ? tcb->m_cWnd.Get() : bytesInFlight);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<Exp<B>>(this);
    }
};

#define EXP_NAME(cls)                                                                              \
    template <>                                                                                    \
    struct ExpName<cls>                                                                            \
    {                                                                                              \
        static constexpr const char* value = "ns3::Exp" #cls;                                      \
    };

/// TcpBic with EXP_BIC_DELACK.
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
        if (tcb->m_congState == TcpSocketState::CA_OPEN)
        {
            m_delayedAck += segmentsAcked - (m_delayedAck >> 4);
        }
        TcpBic::PktsAcked(tcb, segmentsAcked, rtt);
    }

  protected:
    uint32_t Update(Ptr<TcpSocketState> tcb) override
    {
        const uint32_t cnt = TcpBic::Update(tcb);
        if (!kBicDelack || m_delayedAck == 0)
        {
            return cnt;
        }
        return std::max<uint32_t>(1, (cnt << 4) / m_delayedAck);
    }

  private:
    uint32_t m_delayedAck{2 << 4};
};

EXP_NAME(ExpBicBase)
EXP_NAME(TcpVegas)
EXP_NAME(TcpWestwoodPlus)
EXP_NAME(TcpIllinois)
EXP_NAME(TcpBic)
EXP_NAME(TcpHighSpeed)
EXP_NAME(TcpScalable)
EXP_NAME(TcpHybla)
EXP_NAME(TcpVeno)
EXP_NAME(TcpYeah)
EXP_NAME(TcpLp)
EXP_NAME(TcpLinuxReno)

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
};

EXP_NAME(ExpHtcpBase)

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
        {"exp-vegas", &Reg<TcpVegas>},
        {"exp-westwood", &Reg<TcpWestwoodPlus>},
        {"exp-illinois", &Reg<TcpIllinois>},
        {"exp-htcp", &Reg<ExpHtcpBase>},
        {"exp-bic", &Reg<ExpBicBase>},
        {"exp-highspeed", &Reg<TcpHighSpeed>},
        {"exp-scalable", &Reg<TcpScalable>},
        {"exp-hybla", &Reg<TcpHybla>},
        {"exp-veno", &Reg<TcpVeno>},
        {"exp-yeah", &Reg<TcpYeah>},
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

/// ConnectFlowTracer, plus this socket's RttSampler (EXP_LINUXRTT).
void
ExpConnectFlowTracer(Ptr<BulkSendApplication> app, FlowTracer* tr, bool linuxRateSampler)
{
    ConnectFlowTracer(app, tr, linuxRateSampler);
    Ptr<TcpSocketBase> sock = DynamicCast<TcpSocketBase>(app->GetSocket());
    RttSampler* s = &g_samplers[PeekPointer(sock)];
    sock->TraceConnectWithoutContext("Tx", MakeCallback(&RttSampler::OnTx, s));
    sock->TraceConnectWithoutContext("Rx", MakeCallback(&RttSampler::OnRx, s));
}

} // namespace

#define CcTypeName ExpCcTypeName
#define ConnectFlowTracer ExpConnectFlowTracer
#include "../../bench/ns3/dumbbell.cc"
