// Private queue discs for the one-change-at-a-time attribution of the queue-discipline
// comparison (docs/validation.md, "Causes (queue disciplines)"). Not part of the grid:
// validation/ns3/build_attr.sh builds bench/ns3/build/qdisc_attr, which is qdisc.cc with the
// PIE type taken from the environment (QDISC_ATTR_PIE, default ns3::PieQueueDisc), so the
// committed qdisc binary and its cache are untouched.
//
// ns3::LinuxPieQueueDisc: PIE with ns-3 3.44's PieQueueDisc structure (the same attributes,
// drop reasons, double arithmetic, timestamps mode only) and a switch for each of its
// deviations from Linux's net/sched/sch_pie.c listed in validation/ns3/QDISC.md. With every
// switch off it behaves as ns-3's PieQueueDisc (checked against the stock runs); each switch
// makes one part follow Linux:
//   LinuxBurst      (QDISC.md 7, 8) the burst allowance as Linux: 150 ms armed at creation
//                   (pie_init -> pie_vars_init), shrinking by the time between dequeues
//                   (pie_process_dequeue), the probability integrating during it (only the
//                   early drop is skipped: pie_drop_early), re-armed whenever the delay was
//                   below target/2 at this update and the last and the probability is 0
//                   (pie_calculate_probability -> pie_vars_init, which also clears accu_prob).
//                   ns-3: armed at the first enqueue, shrinking by Tupdate per update, the
//                   probability held at 0 while any is left, re-armed after 1.5 s of calm.
//   LinuxSafeguard  (9) no early drop while the *current* delay is below target/2 and p < 20 %
//                   (ns-3: the previous update's delay).
//   LinuxHighDelay  (10) +2 % per update while the delay exceeds 250 ms.
//   LinuxDecay      (11) the decay after two zero-delay updates is p -= p / 64 (ns-3: p *= 0.98).
//   LinuxAccu       (12) accu_prob reset when the random test fires (mark or drop), as Linux.
//   FirstUpdate     the first probability update (Linux: HZ / 2 = 500 ms after pie_init;
//                   ns-3: at 0).

#ifndef CCSIM_QDISC_ATTR_H
#define CCSIM_QDISC_ATTR_H

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/queue-disc.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cstdlib>
#include <string>

namespace ns3
{

class LinuxPieQueueDisc : public QueueDisc
{
  public:
    static constexpr const char* UNFORCED_DROP = "Unforced drop"; // as PieQueueDisc's strings
    static constexpr const char* FORCED_DROP = "Forced drop";
    static constexpr const char* UNFORCED_MARK = "Unforced mark";

    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::LinuxPieQueueDisc")
                .SetParent<QueueDisc>()
                .SetGroupName("TrafficControl")
                .AddConstructor<LinuxPieQueueDisc>()
                .AddAttribute("MeanPktSize", "unused (packet mode)", UintegerValue(1000),
                              MakeUintegerAccessor(&LinuxPieQueueDisc::m_meanPktSize),
                              MakeUintegerChecker<uint32_t>())
                .AddAttribute("A", "alpha", DoubleValue(0.125), MakeDoubleAccessor(&LinuxPieQueueDisc::m_a),
                              MakeDoubleChecker<double>())
                .AddAttribute("B", "beta", DoubleValue(1.25), MakeDoubleAccessor(&LinuxPieQueueDisc::m_b),
                              MakeDoubleChecker<double>())
                .AddAttribute("Tupdate", "update period", TimeValue(MilliSeconds(15)),
                              MakeTimeAccessor(&LinuxPieQueueDisc::m_tUpdate), MakeTimeChecker())
                .AddAttribute("FirstUpdate", "time of the first update (Linux 500 ms, ns-3 0)", TimeValue(Seconds(0)),
                              MakeTimeAccessor(&LinuxPieQueueDisc::m_firstUpdate), MakeTimeChecker())
                .AddAttribute("MaxSize", "hard limit", QueueSizeValue(QueueSize("25p")),
                              MakeQueueSizeAccessor(&QueueDisc::SetMaxSize, &QueueDisc::GetMaxSize),
                              MakeQueueSizeChecker())
                .AddAttribute("QueueDelayReference", "target", TimeValue(MilliSeconds(15)),
                              MakeTimeAccessor(&LinuxPieQueueDisc::m_qDelayRef), MakeTimeChecker())
                .AddAttribute("MaxBurstAllowance", "max burst", TimeValue(MilliSeconds(150)),
                              MakeTimeAccessor(&LinuxPieQueueDisc::m_maxBurst), MakeTimeChecker())
                .AddAttribute("UseDequeueRateEstimator", "must be false", BooleanValue(false),
                              MakeBooleanAccessor(&LinuxPieQueueDisc::m_useDqRateEstimator), MakeBooleanChecker())
                .AddAttribute("UseCapDropAdjustment", "cap the increase at 2 % from p >= 10 %", BooleanValue(true),
                              MakeBooleanAccessor(&LinuxPieQueueDisc::m_isCapDropAdjustment), MakeBooleanChecker())
                .AddAttribute("UseEcn", "mark ECT packets while p < MarkEcnThreshold", BooleanValue(false),
                              MakeBooleanAccessor(&LinuxPieQueueDisc::m_useEcn), MakeBooleanChecker())
                .AddAttribute("MarkEcnThreshold", "ECN marking threshold", DoubleValue(0.1),
                              MakeDoubleAccessor(&LinuxPieQueueDisc::m_markEcnTh), MakeDoubleChecker<double>(0, 1))
                .AddAttribute("UseDerandomization", "accumulated probability", BooleanValue(false),
                              MakeBooleanAccessor(&LinuxPieQueueDisc::m_useDerandomization), MakeBooleanChecker())
                .AddAttribute("LinuxBurst", "QDISC.md 7, 8", BooleanValue(false),
                              MakeBooleanAccessor(&LinuxPieQueueDisc::m_linuxBurst), MakeBooleanChecker())
                .AddAttribute("LinuxSafeguard", "QDISC.md 9", BooleanValue(false),
                              MakeBooleanAccessor(&LinuxPieQueueDisc::m_linuxSafeguard), MakeBooleanChecker())
                .AddAttribute("LinuxHighDelay", "QDISC.md 10", BooleanValue(false),
                              MakeBooleanAccessor(&LinuxPieQueueDisc::m_linuxHighDelay), MakeBooleanChecker())
                .AddAttribute("LinuxDecay", "QDISC.md 11", BooleanValue(false),
                              MakeBooleanAccessor(&LinuxPieQueueDisc::m_linuxDecay), MakeBooleanChecker())
                .AddAttribute("LinuxAccu", "QDISC.md 12", BooleanValue(false),
                              MakeBooleanAccessor(&LinuxPieQueueDisc::m_linuxAccu), MakeBooleanChecker());
        return tid;
    }

    LinuxPieQueueDisc()
        : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE)
    {
        m_uv = CreateObject<UniformRandomVariable>();
    }

  private:
    static constexpr double BURST_RESET_TIMEOUT = 1.5; // ns-3's burst state machine

    enum BurstState
    {
        NO_BURST,
        IN_BURST,
        IN_BURST_PROTECTING,
    };

    void DoDispose() override
    {
        m_uv = nullptr;
        m_timer.Cancel();
        QueueDisc::DoDispose();
    }

    void InitializeParams() override
    {
        NS_ABORT_MSG_IF(m_useDqRateEstimator, "LinuxPieQueueDisc: timestamps mode only");
        m_dropProb = 0;
        m_accuProb = 0;
        m_qDelay = Seconds(0);
        m_qDelayOld = Seconds(0);
        m_burstState = NO_BURST;
        m_burstReset = 0;
        m_dqValid = false;
        // Linux: pie_init -> pie_vars_init arms the allowance at creation.
        m_burstAllowance = m_linuxBurst ? m_maxBurst : Seconds(0);
        m_timer = Simulator::Schedule(m_firstUpdate, &LinuxPieQueueDisc::CalculateP, this);
    }

    bool CheckConfig() override
    {
        if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0)
        {
            return false;
        }
        if (GetNInternalQueues() == 0)
        {
            AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
                "MaxSize", QueueSizeValue(GetMaxSize())));
        }
        return GetNInternalQueues() == 1;
    }

    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        QueueSize nQueued = GetCurrentSize();
        if (nQueued + item > GetMaxSize())
        {
            DropBeforeEnqueue(item, FORCED_DROP);
            m_accuProb = 0;
            return false;
        }
        if (DropEarly(item, nQueued.GetValue()))
        {
            if (!m_useEcn || m_dropProb >= m_markEcnTh || !Mark(item, UNFORCED_MARK))
            {
                DropBeforeEnqueue(item, UNFORCED_DROP);
                m_accuProb = 0;
                return false;
            }
        }
        return GetInternalQueue(0)->Enqueue(item);
    }

    bool DropEarly(Ptr<QueueDiscItem> item, uint32_t qSize)
    {
        if (m_burstAllowance.IsStrictlyPositive())
        {
            return false;
        }
        if (!m_linuxBurst && m_burstState == NO_BURST)
        {
            m_burstState = IN_BURST_PROTECTING;
            m_burstAllowance = m_maxBurst;
        }
        const double p = m_dropProb;
        const Time safeDelay = m_linuxSafeguard ? m_qDelay : m_qDelayOld;
        if ((safeDelay.GetSeconds() < 0.5 * m_qDelayRef.GetSeconds() && m_dropProb < 0.2) || qSize <= 2)
        {
            return false;
        }
        if (m_useDerandomization)
        {
            if (m_dropProb == 0)
            {
                m_accuProb = 0;
            }
            m_accuProb += m_dropProb;
            if (m_accuProb < 0.85)
            {
                return false;
            }
            if (m_accuProb >= 8.5)
            {
                return true;
            }
        }
        if (m_uv->GetValue() <= p)
        {
            if (m_linuxAccu)
            {
                m_accuProb = 0;
            }
            return true;
        }
        return false;
    }

    void CalculateP()
    {
        const Time qDelay = m_qDelay;
        double p = 0.0;
        if (!m_linuxBurst && m_burstAllowance.IsStrictlyPositive())
        {
            m_dropProb = 0;
        }
        else
        {
            p = m_a * (qDelay.GetSeconds() - m_qDelayRef.GetSeconds()) +
                m_b * (qDelay.GetSeconds() - m_qDelayOld.GetSeconds());
            if (m_dropProb < 0.000001)
            {
                p /= 2048;
            }
            else if (m_dropProb < 0.00001)
            {
                p /= 512;
            }
            else if (m_dropProb < 0.0001)
            {
                p /= 128;
            }
            else if (m_dropProb < 0.001)
            {
                p /= 32;
            }
            else if (m_dropProb < 0.01)
            {
                p /= 8;
            }
            else if (m_dropProb < 0.1)
            {
                p /= 2;
            }
            if (m_isCapDropAdjustment && m_dropProb >= 0.1 && p > 0.02)
            {
                p = 0.02;
            }
            if (m_linuxHighDelay && qDelay > MilliSeconds(250))
            {
                p += 0.02;
            }
        }
        p += m_dropProb;
        if (qDelay.IsZero() && m_qDelayOld.IsZero())
        {
            p = m_linuxDecay ? p - p / 64 : p * 0.98;
        }
        m_dropProb = p < 0 ? 0 : (p > 1 ? 1 : p);

        const bool calm = qDelay.GetSeconds() < 0.5 * m_qDelayRef.GetSeconds() &&
                          m_qDelayOld.GetSeconds() < 0.5 * m_qDelayRef.GetSeconds() && m_dropProb == 0;
        if (m_linuxBurst)
        {
            if (calm) // pie_vars_init
            {
                m_burstAllowance = m_maxBurst;
                m_dqValid = false;
                m_accuProb = 0;
            }
        }
        else
        {
            m_burstAllowance = m_burstAllowance < m_tUpdate ? Seconds(0) : m_burstAllowance - m_tUpdate;
            const auto resetLimit = static_cast<uint32_t>(BURST_RESET_TIMEOUT / m_tUpdate.GetSeconds());
            if (calm && m_burstAllowance.IsZero())
            {
                if (m_burstState == IN_BURST_PROTECTING)
                {
                    m_burstState = IN_BURST;
                    m_burstReset = 0;
                }
                else if (m_burstState == IN_BURST && ++m_burstReset > resetLimit)
                {
                    m_burstReset = 0;
                    m_burstState = NO_BURST;
                }
            }
            else if (m_burstState == IN_BURST)
            {
                m_burstReset = 0;
            }
        }
        m_qDelayOld = qDelay;
        m_timer = Simulator::Schedule(m_tUpdate, &LinuxPieQueueDisc::CalculateP, this);
    }

    Ptr<QueueDiscItem> DoDequeue() override
    {
        Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
        if (!item)
        {
            return nullptr;
        }
        const Time now = Simulator::Now();
        m_qDelay = now - item->GetTimeStamp();
        if (GetInternalQueue(0)->GetNBytes() == 0)
        {
            m_qDelay = Seconds(0);
        }
        if (m_linuxBurst)
        {
            // pie_process_dequeue: the allowance shrinks by the time since the last dequeue.
            const Time dtime = m_dqValid ? now - m_dqStamp : Seconds(0);
            m_dqStamp = now;
            m_dqValid = true;
            if (dtime.IsStrictlyPositive() && m_burstAllowance.IsStrictlyPositive())
            {
                m_burstAllowance = m_burstAllowance > dtime ? m_burstAllowance - dtime : Seconds(0);
            }
        }
        return item;
    }

    // attributes
    uint32_t m_meanPktSize;
    double m_a;
    double m_b;
    Time m_tUpdate;
    Time m_firstUpdate;
    Time m_qDelayRef;
    Time m_maxBurst;
    bool m_useDqRateEstimator;
    bool m_isCapDropAdjustment;
    bool m_useEcn;
    double m_markEcnTh;
    bool m_useDerandomization;
    bool m_linuxBurst;
    bool m_linuxSafeguard;
    bool m_linuxHighDelay;
    bool m_linuxDecay;
    bool m_linuxAccu;
    // state
    double m_dropProb{0};
    double m_accuProb{0};
    Time m_qDelay;
    Time m_qDelayOld;
    Time m_burstAllowance;
    BurstState m_burstState{NO_BURST};
    uint32_t m_burstReset{0};
    bool m_dqValid{false};
    Time m_dqStamp;
    EventId m_timer;
    Ptr<UniformRandomVariable> m_uv;
};

NS_OBJECT_ENSURE_REGISTERED(LinuxPieQueueDisc);

} // namespace ns3

// The PIE queue disc qdisc.cc installs (build_attr.sh substitutes this for "ns3::PieQueueDisc").
inline std::string
QdiscAttrPieType()
{
    const char* t = std::getenv("QDISC_ATTR_PIE");
    return t && *t ? t : "ns3::PieQueueDisc";
}

#endif
