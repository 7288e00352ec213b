// Shared by ccsim's ns-3 programs (bench/ns3/dumbbell.cc, validation/ns3/parking_lot.cc,
// validation/ns3/qdisc.cc):
// the TCP pieces both need to measure what ccsim measures and to switch off the ns-3 3.44
// deviations from Linux that docs/validation.md identifies.
//
//   FlowTracer            per-flow sender statistics from the socket's trace sources: the
//                         Linux ca_rtt_us RTT sample ccsim averages, bytes cumulatively
//                         ACKed, retransmissions, recoveries, RTOs, ECE-triggered reductions
//   ConnectFlowTracer     connects a FlowTracer to a BulkSend's socket (optionally swapping
//                         in LinuxRateSampler first)
//   QueueAvg              time-averaged length of a device queue
//   PrrSackRecovery       --recovery=prr-sack     (cause A in docs/validation.md)
//   LinuxRateSampler      --rateSampler=linux     (cause B)
//   TcpNewRenoFlightSize  --cc=newreno-flightsize (cause D)
//   SetCcsimTcpDefaults   the TCP attribute defaults both programs set
//   P2pLinkHelper              a point-to-point link: rate, delay, device queue, flow control
//   UninstallQueueDiscsExcept  no traffic-control queue disc but (at most) one
//   DeviceQueueDropsExcept     drops of every other point-to-point device queue
//   CcTypeName, SplitCommaList, JsonString, PeakRssMb: small helpers
//
// Each class says what it changes and why where it is defined. Everything sits in an
// anonymous namespace: each program is one translation unit that includes this file once.
// The build scripts recompile a program when this file changes (NS3_DEPS in ns3-wheel.sh).

#pragma once

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace
{

using namespace ns3;

std::vector<std::string>
SplitCommaList(const std::string& s)
{
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty())
        {
            std::transform(item.begin(), item.end(), item.begin(), ::tolower);
            out.push_back(item);
        }
    }
    return out;
}

// --cc=newreno-flightsize (an experiment for docs/validation.md): ns3::TcpNewReno
// with RFC 5681 eq. (4) / RFC 6675 step (4.2), ssthresh = max(FlightSize / 2,
// 2 SMSS), FlightSize = SND.NXT - SND.UNA.  Stock TcpNewReno::GetSsThresh halves
// the bytesInFlight it is given, which TcpSocketBase::EnterRecovery computes as
// the RFC 6675 pipe (SACKed and lost segments excluded), i.e. about
// (FlightSize - DupThresh - 1) / 2 at the third duplicate ACK.
class TcpNewRenoFlightSize : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::CcsimValidationNewRenoFlightSize")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpNewRenoFlightSize>();
        return tid;
    }

    std::string GetName() const override
    {
        return "TcpNewRenoFlightSize";
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t /* bytesInFlight */) override
    {
        const uint32_t flight =
            static_cast<uint32_t>(tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq);
        return std::max(2 * tcb->m_segmentSize, flight / 2);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpNewRenoFlightSize>(this);
    }
};

std::string
CcTypeName(const std::string& cc)
{
    if (cc == "newreno" || cc == "reno")
    {
        return "ns3::TcpNewReno";
    }
    if (cc == "cubic")
    {
        return "ns3::TcpCubic";
    }
    if (cc == "bbr")
    {
        return "ns3::TcpBbr";
    }
    if (cc == "linuxreno")
    {
        return "ns3::TcpLinuxReno";
    }
    if (cc == "newreno-flightsize")
    {
        return TcpNewRenoFlightSize::GetTypeId().GetName();
    }
    // Linux's classic set, as ns-3 models it (validation/ns3/algorithms.py): the ccsim name
    // and the ns-3 class.
    static const std::map<std::string, std::string> classic = {
        {"vegas", "ns3::TcpVegas"},
        {"westwood", "ns3::TcpWestwoodPlus"},
        {"illinois", "ns3::TcpIllinois"},
        {"htcp", "ns3::TcpHtcp"},
        {"bic", "ns3::TcpBic"},
        {"highspeed", "ns3::TcpHighSpeed"},
        {"scalable", "ns3::TcpScalable"},
        {"hybla", "ns3::TcpHybla"},
        {"veno", "ns3::TcpVeno"},
        {"yeah", "ns3::TcpYeah"},
        {"lp", "ns3::TcpLp"},
        {"dctcp", "ns3::TcpDctcp"},
    };
    auto it = classic.find(cc);
    return it == classic.end() ? "" : it->second;
}

double
PeakRssMb()
{
    struct rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0; // Linux: kilobytes
}

std::string
JsonString(const std::string& s)
{
    std::string out = "\"";
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

// Sender-side per-flow statistics from the socket's trace sources (only with
// --flowStats=1).
//
// RTT: on every ACK that reaches the sender, one sample = now - send time of
// the most recently sent segment that this ACK newly SACKs, or, if it SACKs
// nothing new, of the most recently sent segment it newly acknowledges
// cumulatively; segments that were ever retransmitted give no sample, and an
// ACK whose cumulative part covers a retransmitted segment gives no
// cumulative sample (Karn; Linux FLAG_RETRANS_DATA_ACKED).  This is Linux's
// ca_rtt_us (tcp_clean_rtx_queue / tcp_sacktag_one) and exactly the sample
// ccsim averages into flows[].rtt_mean_ms (tcp/sender.rs on_ack), so the two
// means are comparable.  It is measured from the packets' send and ACK
// arrival times, independently of ns-3's own RTT estimator, whose samples
// come from the echoed timestamp in 1 ms units and only from ACKs that
// cumulatively cover the oldest unacknowledged segment, and whose "RTT" trace
// reports the smoothed estimate (srtt_mean_ms below).
struct SegRecord
{
    uint64_t end;
    Time sent;
    bool everRetx;
    bool sacked;
};

struct FlowTracer
{
    std::map<uint64_t, SegRecord> segs; // key: first byte (unwrapped sequence number)
    uint64_t highTx = 0;                // one past the highest byte ever sent
    uint64_t highAck = 0;               // highest cumulative ACK seen
    uint64_t firstSeq = 0;
    bool started = false;
    uint64_t segmentsSent = 0;
    uint64_t retransmits = 0;
    uint64_t fastRecoveries = 0;
    uint64_t rtoCount = 0;
    uint64_t cwrEntries = 0; // entries into CA_CWR: ECE-triggered window reductions
    double rttSum = 0.0; // seconds
    uint64_t rttN = 0;
    double rttMin = 1e300;
    double srttSum = 0.0;
    uint64_t srttN = 0;
    // last values, for --traceFile sampling
    uint32_t cwnd = 0;
    uint32_t ssthresh = 0;
    uint32_t inflight = 0;
    double pacingBps = 0.0;
    double srtt = 0.0;
    int congState = 0;
    std::ofstream* events = nullptr; // --traceFile: state changes
    uint32_t id = 0;

    uint64_t Unwrap(uint32_t v) const
    {
        // nearest 64-bit value to highTx with these low 32 bits
        const uint64_t ref = highTx;
        const int32_t d = static_cast<int32_t>(v - static_cast<uint32_t>(ref));
        return static_cast<uint64_t>(static_cast<int64_t>(ref) + d);
    }

    void OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        const uint32_t len = p->GetSize();
        if (len == 0)
        {
            return; // SYN, pure ACK
        }
        const Time now = Simulator::Now();
        if (!started)
        {
            started = true;
            highTx = h.GetSequenceNumber().GetValue();
            highAck = highTx;
            firstSeq = highTx;
        }
        const uint64_t seq = Unwrap(h.GetSequenceNumber().GetValue());
        const uint64_t end = seq + len;
        if (seq >= highTx)
        {
            segs[seq] = SegRecord{end, now, false, false};
            highTx = end;
            ++segmentsSent;
            return;
        }
        // retransmission (possibly re-segmented): mark every overlapping record
        ++retransmits;
        if (events)
        {
            *events << "#retx," << now.GetSeconds() << "," << id << "," << (seq - firstSeq) / len
                    << ",cwnd=" << cwnd << ",inflight=" << inflight << "\n";
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
            segs[highTx] = SegRecord{end, now, false, false};
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
                    SegRecord& s = it->second;
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
            const SegRecord& s = segs.begin()->second;
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
        if (ack > highAck)
        {
            highAck = ack;
        }
        Time sample;
        if (haveSack)
        {
            sample = now - lastSack;
        }
        else if (haveCum && !retransAcked)
        {
            sample = now - lastCum;
        }
        else
        {
            return;
        }
        const double r = sample.GetSeconds();
        rttSum += r;
        ++rttN;
        rttMin = std::min(rttMin, r);
    }

    void OnCongState(TcpSocketState::TcpCongState_t oldS, TcpSocketState::TcpCongState_t newS)
    {
        congState = newS;
        if (events)
        {
            *events << "#event," << Simulator::Now().GetSeconds() << "," << id << ",state,"
                    << TcpSocketState::TcpCongStateName[oldS] << ">"
                    << TcpSocketState::TcpCongStateName[newS] << ",cwnd=" << cwnd
                    << ",ssthresh=" << ssthresh << ",inflight=" << inflight << "\n";
        }
        if (newS == TcpSocketState::CA_RECOVERY && oldS != TcpSocketState::CA_RECOVERY)
        {
            ++fastRecoveries;
        }
        if (newS == TcpSocketState::CA_CWR && oldS != TcpSocketState::CA_CWR)
        {
            ++cwrEntries;
        }
        if (newS == TcpSocketState::CA_LOSS)
        {
            ++rtoCount; // every expiry passes through CA_LOSS (also repeated ones)
        }
    }

    void OnSrtt(Time, Time newV)
    {
        srttSum += newV.GetSeconds();
        ++srttN;
        srtt = newV.GetSeconds();
    }

    void OnCwnd(uint32_t, uint32_t v)
    {
        cwnd = v;
    }

    void OnSsThresh(uint32_t, uint32_t v)
    {
        ssthresh = v;
    }

    void OnInflight(uint32_t, uint32_t v)
    {
        inflight = v;
    }

    void OnPacing(DataRate, DataRate v)
    {
        pacingBps = v.GetBitRate();
    }

    uint64_t BytesAcked() const
    {
        return started ? highAck - firstSeq : 0;
    }
};

// Time-averaged number of packets waiting in the bottleneck queue.
struct QueueAvg
{
    double area = 0.0; // packet-seconds
    double lastT = 0.0;
    uint32_t last = 0;

    void OnChange(uint32_t, uint32_t newV)
    {
        const double t = Simulator::Now().GetSeconds();
        area += last * (t - lastT);
        lastT = t;
        last = newV;
    }

    double Mean(double endT)
    {
        OnChange(last, last);
        return endT > 0 ? area / endT : 0.0;
    }
};

// --rateSampler=linux (an experiment for docs/validation.md, off by default):
// a delivery-rate sampler with Linux tcp_rate.c semantics, swapped in for the
// socket's stock ns3::TcpRateLinux.  Only BBR consumes the samples.  The stock
// one keeps its sample across ACKs and computes the ACK-phase length when it
// picks the reference packet (SkbDelivered), not when it generates the sample:
// when an ACK delivers a packet that carries the same send-time snapshot as the
// previous ACK's reference (two packets sent between the same two ACKs), it
// reuses the previous ACK's interval with one more packet delivered, so the
// sample is too high by one packet per interval.  Linux (tcp_rate_skb_delivered
// / tcp_rate_gen) starts a fresh sample on every ACK and measures the ACK phase
// at the current ACK.  This class does that; everything else (app-limited
// marking, the min-RTT validity check, bytes as the unit) is as in ns-3.
class LinuxRateSampler : public TcpRateOps
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::CcsimValidationLinuxRateSampler")
                                .SetParent<TcpRateOps>()
                                .SetGroupName("Internet");
        return tid;
    }

    void SkbSent(TcpTxItem* skb, bool isStartOfTransmission) override
    {
        TcpTxItem::RateInformation& ri = skb->GetRateInformation();
        if (isStartOfTransmission)
        {
            m_rate.m_firstSentTime = Simulator::Now();
            m_rate.m_deliveredTime = Simulator::Now();
        }
        ri.m_firstSent = m_rate.m_firstSentTime;
        ri.m_deliveredTime = m_rate.m_deliveredTime;
        ri.m_isAppLimited = (m_rate.m_appLimited != 0);
        ri.m_delivered = m_rate.m_delivered;
    }

    void SkbDelivered(TcpTxItem* skb) override
    {
        TcpTxItem::RateInformation& ri = skb->GetRateInformation();
        if (ri.m_deliveredTime == Time::Max())
        {
            return; // already counted when it was SACKed
        }
        const Time now = Simulator::Now();
        if (m_refAt != now)
        {
            m_haveRef = false; // first packet of a new ACK: a fresh sample
        }
        m_rate.m_delivered += skb->GetSeqSize();
        m_rate.m_deliveredTime = now;
        if (!m_haveRef || skb->GetLastSent() > m_rate.m_firstSentTime)
        {
            // the most recently sent packet this ACK delivers is the reference
            m_haveRef = true;
            m_refAt = now;
            m_rs.m_priorDelivered = ri.m_delivered;
            m_rs.m_priorTime = ri.m_deliveredTime;
            m_rs.m_isAppLimited = ri.m_isAppLimited;
            m_rs.m_sendElapsed = skb->GetLastSent() - ri.m_firstSent;
            m_rate.m_firstSentTime = skb->GetLastSent();
        }
        ri.m_deliveredTime = Time::Max();
        m_rate.m_txItemDelivered = ri.m_delivered;
    }

    void CalculateAppLimited(uint32_t cWnd,
                             uint32_t inFlight,
                             uint32_t segmentSize,
                             const SequenceNumber32& tailSeq,
                             const SequenceNumber32& nextTx,
                             const uint32_t lostOut,
                             const uint32_t retransOut) override
    {
        if (tailSeq - nextTx < static_cast<int32_t>(segmentSize) && inFlight < cWnd &&
            lostOut <= retransOut)
        {
            m_rate.m_appLimited = std::max<uint32_t>(m_rate.m_delivered + inFlight, 1);
        }
    }

    const TcpRateSample& GenerateSample(uint32_t delivered,
                                        uint32_t lost,
                                        bool isSackReneg,
                                        uint32_t priorInFlight,
                                        const Time& minRtt) override
    {
        const Time now = Simulator::Now();
        if (m_rate.m_appLimited != 0 && m_rate.m_delivered > m_rate.m_appLimited)
        {
            m_rate.m_appLimited = 0;
        }
        m_rs.m_ackedSacked = delivered;
        m_rs.m_bytesLoss = lost;
        m_rs.m_priorInFlight = priorInFlight;
        const bool fresh = m_haveRef && m_refAt == now;
        m_haveRef = false;
        if (!fresh || isSackReneg)
        {
            m_rs.m_delivered = -1; // no packet delivered by this ACK: no sample
            m_rs.m_interval = Seconds(0);
            m_rs.m_deliveryRate = DataRate(0);
            return m_rs;
        }
        m_rs.m_ackElapsed = now - m_rs.m_priorTime; // ACK phase, measured now
        m_rs.m_interval = std::max(m_rs.m_sendElapsed, m_rs.m_ackElapsed);
        m_rs.m_delivered = static_cast<int32_t>(m_rate.m_delivered - m_rs.m_priorDelivered);
        if (m_rs.m_interval < minRtt || m_rs.m_interval.IsZero())
        {
            m_rs.m_interval = Seconds(0);
            m_rs.m_deliveryRate = DataRate(0);
            return m_rs;
        }
        const double secs = m_rs.m_interval.GetSeconds();
        if (!m_rs.m_isAppLimited ||
            m_rs.m_delivered * m_rate.m_rateInterval.GetSeconds() >= m_rate.m_rateDelivered * secs)
        {
            m_rate.m_rateDelivered = m_rs.m_delivered;
            m_rate.m_rateInterval = m_rs.m_interval;
            m_rate.m_rateAppLimited = m_rs.m_isAppLimited;
        }
        m_rs.m_deliveryRate = DataRate(static_cast<uint64_t>(m_rs.m_delivered * 8.0 / secs));
        return m_rs;
    }

    const TcpRateConnection& GetConnectionRate() override
    {
        return m_rate;
    }

  private:
    TcpRateConnection m_rate;
    TcpRateSample m_rs;
    bool m_haveRef = false;
    Time m_refAt = Time::Min();
};

// --recovery=prr-sack (an experiment for docs/validation.md, off by default):
// ns-3 3.44's TcpPrrRecovery::DoRecovery adds one segment to DeliveredData on
// every duplicate ACK even when SACK is on, although the caller already passes
// the SACK-derived delivered bytes (RFC 6937 / RFC 9937 section 6.2 add the
// segment only without SACK; Linux tcp_cwnd_reduction adds nothing).  With
// delayed-ACK-free duplicate ACKs that makes prr_delivered grow twice as fast
// as the data that left the network, so for the first half of the recovery the
// sender transmits ~1.4 segments per segment delivered into a full queue, loses
// them, and a second recovery (a second multiplicative decrease) follows.  This
// class is the same PRR (RecoverFS = pipe at entry, PRR-CRB / PRR-SSRB as
// ns-3) without that extra segment.  It assumes SACK (this program always
// enables it).
class PrrSackRecovery : public TcpRecoveryOps
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::CcsimValidationPrrSackRecovery")
                                .SetParent<TcpRecoveryOps>()
                                .SetGroupName("Internet")
                                .AddConstructor<PrrSackRecovery>();
        return tid;
    }

    std::string GetName() const override
    {
        return "PrrSackRecovery";
    }

    void EnterRecovery(Ptr<TcpSocketState> tcb,
                       uint32_t /* dupAckCount */,
                       uint32_t /* unAckDataCount */,
                       uint32_t deliveredBytes) override
    {
        m_prrOut = 0;
        m_prrDelivered = 0;
        m_recoveryFlightSize = std::max<uint32_t>(tcb->m_bytesInFlight, 1);
        DoRecovery(tcb, deliveredBytes, true);
    }

    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes, bool isDupAck) override
    {
        // No "+1 segment per duplicate ACK": with SACK (always on in this program)
        // deliveredBytes is already the SACK-derived DeliveredData.
        (void)isDupAck;
        if (deliveredBytes == 0)
        {
            return;
        }
        m_prrDelivered += deliveredBytes;
        const int64_t pipe = tcb->m_bytesInFlight;
        const int64_t ssthresh = tcb->m_ssThresh;
        int64_t sendCount;
        if (pipe > ssthresh)
        {
            const uint64_t dividend = static_cast<uint64_t>(m_prrDelivered) * ssthresh;
            sendCount = static_cast<int64_t>((dividend + m_recoveryFlightSize - 1) / m_recoveryFlightSize) -
                        static_cast<int64_t>(m_prrOut);
        }
        else
        {
            int64_t limit = std::max<int64_t>(static_cast<int64_t>(m_prrDelivered) - m_prrOut,
                                              deliveredBytes);
            if (tcb->m_isRetransDataAcked)
            {
                limit += tcb->m_segmentSize; // PRR-SSRB, as ns-3 approximates it
            }
            sendCount = std::min<int64_t>(limit, ssthresh - pipe);
        }
        // force the fast retransmit on entry
        sendCount = std::max<int64_t>(sendCount, m_prrOut > 0 ? 0 : tcb->m_segmentSize);
        tcb->m_cWnd = static_cast<uint32_t>(std::max<int64_t>(pipe + sendCount, 0));
        tcb->m_cWndInfl = tcb->m_cWnd;
    }

    void ExitRecovery(Ptr<TcpSocketState> tcb) override
    {
        tcb->m_cWndInfl = tcb->m_cWnd;
    }

    void UpdateBytesSent(uint32_t bytesSent) override
    {
        m_prrOut += bytesSent;
    }

    Ptr<TcpRecoveryOps> Fork() override
    {
        return CopyObject<PrrSackRecovery>(this);
    }

  private:
    uint32_t m_prrDelivered = 0;
    uint32_t m_prrOut = 0;
    uint32_t m_recoveryFlightSize = 1;
};

// TcpSocketBase::m_rateOps is protected and has no attribute; a pointer to the
// member, formed through a derived class, reaches it.
struct RateOpsAccess : public TcpSocketBase
{
    static Ptr<TcpRateOps> TcpSocketBase::*Member()
    {
        return &RateOpsAccess::m_rateOps;
    }
};

void
ConnectFlowTracer(Ptr<BulkSendApplication> app, FlowTracer* tr, bool linuxRateSampler)
{
    Ptr<TcpSocketBase> sock = DynamicCast<TcpSocketBase>(app->GetSocket());
    NS_ABORT_MSG_IF(!sock, "flowStats: BulkSend has no TCP socket yet");
    if (linuxRateSampler)
    {
        // before any data segment exists (only the SYN has been sent)
        (*sock).*(RateOpsAccess::Member()) = CreateObject<LinuxRateSampler>();
    }
    sock->TraceConnectWithoutContext("Tx", MakeCallback(&FlowTracer::OnTx, tr));
    sock->TraceConnectWithoutContext("Rx", MakeCallback(&FlowTracer::OnRx, tr));
    sock->TraceConnectWithoutContext("CongState", MakeCallback(&FlowTracer::OnCongState, tr));
    sock->TraceConnectWithoutContext("RTT", MakeCallback(&FlowTracer::OnSrtt, tr));
    sock->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&FlowTracer::OnCwnd, tr));
    sock->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&FlowTracer::OnSsThresh, tr));
    sock->TraceConnectWithoutContext("BytesInFlight", MakeCallback(&FlowTracer::OnInflight, tr));
    sock->TraceConnectWithoutContext("PacingRate", MakeCallback(&FlowTracer::OnPacing, tr));
}


/// The TCP defaults both programs set to match ccsim's TCP (attribute names checked against
/// the 3.44 TypeIds): MSS, socket buffers, delayed ACKs, IW 10, SACK, timestamps, window
/// scaling, the RTO floor and clock granularity, no pacing, and the recovery algorithm
/// (`prr`: ns-3's default; `classic`; `prr-sack`: PrrSackRecovery above).
void
SetCcsimTcpDefaults(uint32_t mss,
                    uint32_t bufBytes,
                    uint32_t delAckCount,
                    const std::string& delAckTimeout,
                    const std::string& minRto,
                    const std::string& clockGranularity,
                    const std::string& recovery)
{
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Time(delAckTimeout)));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Time(minRto)));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Time(clockGranularity)));
    if (recovery == "classic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TypeId::LookupByName("ns3::TcpClassicRecovery")));
    }
    else if (recovery == "prr-sack")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(PrrSackRecovery::GetTypeId()));
    }
}

/// A point-to-point link helper: rate, one-way delay, a drop-tail device queue of `queue`,
/// and flow control off (no queue disc can sit above the device) unless `flowControl`.
PointToPointHelper
P2pLinkHelper(const std::string& rate, const std::string& delay, const QueueSize& queue, bool flowControl)
{
    PointToPointHelper h;
    h.SetDeviceAttribute("DataRate", StringValue(rate));
    h.SetChannelAttribute("Delay", StringValue(delay));
    h.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(queue));
    if (!flowControl)
    {
        h.DisableFlowControl();
    }
    return h;
}

/// Removes the root queue disc of every device of every node except `keep` (null: all), so
/// the device queues are the only buffers (and, in qdisc.cc, the one queue disc on `keep`);
/// Ipv4AddressHelper installs FqCoDel on every device that has flow control. Aborts if one
/// is left.
void
UninstallQueueDiscsExcept(Ptr<NetDevice> keep)
{
    NodeContainer all = NodeContainer::GetGlobal();
    for (uint32_t n = 0; n < all.GetN(); ++n)
    {
        Ptr<TrafficControlLayer> tc = all.Get(n)->GetObject<TrafficControlLayer>();
        for (uint32_t d = 0; d < all.Get(n)->GetNDevices(); ++d)
        {
            Ptr<NetDevice> dev = all.Get(n)->GetDevice(d);
            if (dev == keep || !tc)
            {
                continue;
            }
            if (tc->GetRootQueueDiscOnDevice(dev))
            {
                TrafficControlHelper().Uninstall(dev);
            }
            NS_ABORT_MSG_IF(tc->GetRootQueueDiscOnDevice(dev), "queue disc still installed");
        }
    }
}

/// Packets dropped by the queue of every point-to-point device except `except`: expected 0
/// where only the bottleneck may drop (reported so a reader can check it).
uint64_t
DeviceQueueDropsExcept(Ptr<NetDevice> except)
{
    uint64_t drops = 0;
    NodeContainer all = NodeContainer::GetGlobal();
    for (uint32_t n = 0; n < all.GetN(); ++n)
    {
        for (uint32_t d = 0; d < all.Get(n)->GetNDevices(); ++d)
        {
            Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(all.Get(n)->GetDevice(d));
            if (p2p && p2p != except)
            {
                drops += p2p->GetQueue()->GetTotalDroppedPackets();
            }
        }
    }
    return drops;
}

} // namespace
