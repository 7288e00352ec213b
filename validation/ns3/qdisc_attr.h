// Private queue discs for the one-change-at-a-time attribution of the queue-discipline
// comparison (docs/validation.md, "Causes (queue disciplines)"). Not part of the grid:
// validation/ns3/build_attr.sh builds bench/ns3/build/qdisc_attr, which is qdisc.cc with the
// PIE, CoDel, FQ-CoDel and TCP types taken from the environment (QDISC_ATTR_PIE,
// QDISC_ATTR_CODEL, QDISC_ATTR_FQCODEL, QDISC_ATTR_CC, QDISC_ATTR_DCTCP; defaults: ns-3's own) and an optional
// trace (QDISC_ATTR_TRACE), so the committed qdisc binary and its cache are untouched. Below:
// LinuxPieQueueDisc, LinuxCoDelQueueDisc, LinuxFqCoDelQueueDisc, TcpLinuxRenoAttr /
// TcpCubicAttr, PrrAttrRecovery (QDISC_ATTR_PRR), TcpDctcpAttr (QDISC_ATTR_DCTCP), QdiscAttrTrace.
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
#include "ns3/config.h"
#include "ns3/codel-queue-disc.h"
#include "ns3/fq-codel-queue-disc.h"
#include "ns3/net-device-queue-interface.h"
#include "ns3/string.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-linux-reno.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/double.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/queue-disc.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-state.h"

#include <fstream>
#include <list>
#include <map>
#include <vector>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>

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
                              MakeBooleanAccessor(&LinuxPieQueueDisc::m_linuxAccu), MakeBooleanChecker())
                .AddTraceSource("PieUpdate",
                                "after each probability update: probability, queue delay (s), burst allowance (s)",
                                MakeTraceSourceAccessor(&LinuxPieQueueDisc::m_updateTrace),
                                "ns3::LinuxPieQueueDisc::UpdateTracedCallback");
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
        m_updateTrace(m_dropProb, qDelay.GetSeconds(), m_burstAllowance.GetSeconds());
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
    TracedCallback<double, double, double> m_updateTrace; // only read by QdiscAttrTrace
};

NS_OBJECT_ENSURE_REGISTERED(LinuxPieQueueDisc);


// ---------------------------------------------------------------------------------------------
// ns3::LinuxCoDelQueueDisc: ns-3 3.44's CoDelQueueDisc (codel-queue-disc.cc, DoDequeue and
// OkToDrop copied in behaviour; no L4S path, CeThreshold unused: both off in the grid) with
//   LinuxMarkSchedule  (QDISC.md 1) a mark in the dropping state schedules the next one from
//                      drop_next, as a drop does (Linux codel_impl.h codel_dequeue:
//                      drop_next = codel_control_law(drop_next, ...)); ns-3: from now.
// and a backlog source for the "backlog <= MTU: do not drop" test (MinBytes) that
// LinuxFqCoDelQueueDisc sets (its LinuxMtuBacklog). It derives from CoDelQueueDisc only to take
// its attributes (and the defaults qdisc.cc sets for them); none of its code runs.
class LinuxCoDelQueueDisc : public CoDelQueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::LinuxCoDelQueueDisc")
                                .SetParent<CoDelQueueDisc>()
                                .SetGroupName("TrafficControl")
                                .AddConstructor<LinuxCoDelQueueDisc>()
                                .AddAttribute("LinuxMarkSchedule", "QDISC.md 1", BooleanValue(false),
                                              MakeBooleanAccessor(&LinuxCoDelQueueDisc::m_linuxMark),
                                              MakeBooleanChecker());
        return tid;
    }

    // The bytes CoDel's MinBytes test reads (default: this queue disc's own backlog).
    void SetBacklogSource(Callback<uint32_t> source)
    {
        m_backlog = source;
    }

  private:
    static constexpr uint32_t SHIFT = CODEL_SHIFT; // codel-queue-disc.h (also REC_INV_SQRT_SHIFT)

    static uint32_t T2C(Time t)
    {
        return static_cast<uint32_t>(t.GetNanoSeconds() >> SHIFT);
    }

    static uint32_t Now()
    {
        return static_cast<uint32_t>(Simulator::Now().GetNanoSeconds() >> SHIFT);
    }

    static bool After(uint32_t a, uint32_t b)
    {
        return (int64_t)(a) - (int64_t)(b) > 0;
    }

    static bool AfterEq(uint32_t a, uint32_t b)
    {
        return (int64_t)(a) - (int64_t)(b) >= 0;
    }

    static bool Before(uint32_t a, uint32_t b)
    {
        return (int64_t)(a) - (int64_t)(b) < 0;
    }

    static uint16_t NewtonStep(uint16_t recInvSqrt, uint32_t count)
    {
        uint32_t invsqrt = ((uint32_t)recInvSqrt) << REC_INV_SQRT_SHIFT;
        uint32_t invsqrt2 = ((uint64_t)invsqrt * invsqrt) >> 32;
        uint64_t val = (3LL << 32) - ((uint64_t)count * invsqrt2);
        val >>= 2;
        val = (val * invsqrt) >> (32 - 2 + 1);
        return static_cast<uint16_t>(val >> REC_INV_SQRT_SHIFT);
    }

    static uint32_t ControlLaw(uint32_t t, uint32_t interval, uint32_t recInvSqrt)
    {
        return t + (uint32_t)(((uint64_t)interval * (recInvSqrt << REC_INV_SQRT_SHIFT)) >> 32);
    }

    void InitializeParams() override
    {
        BooleanValue b;
        GetAttribute("UseEcn", b);
        m_useEcn = b.Get();
        GetAttribute("UseL4s", b);
        NS_ABORT_MSG_IF(b.Get(), "LinuxCoDelQueueDisc: no L4S");
        UintegerValue u;
        GetAttribute("MinBytes", u);
        m_minBytes = u.Get();
        TimeValue t;
        GetAttribute("Interval", t);
        m_interval = T2C(t.Get());
        GetAttribute("Target", t);
        m_target = T2C(t.Get());
        GetAttribute("CeThreshold", t);
        NS_ABORT_MSG_IF(t.Get() != Time::Max(), "LinuxCoDelQueueDisc: no CeThreshold");
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
        if (GetCurrentSize() + item > GetMaxSize())
        {
            DropBeforeEnqueue(item, OVERLIMIT_DROP);
            return false;
        }
        return GetInternalQueue(0)->Enqueue(item);
    }

    bool OkToDrop(Ptr<QueueDiscItem> item, uint32_t now)
    {
        if (!item)
        {
            m_firstAboveTime = 0;
            return false;
        }
        const uint32_t sojourn = T2C(Simulator::Now() - item->GetTimeStamp());
        const uint32_t backlog = m_backlog.IsNull() ? GetInternalQueue(0)->GetNBytes() : m_backlog();
        if (Before(sojourn, m_target) || backlog < m_minBytes)
        {
            m_firstAboveTime = 0;
            return false;
        }
        bool ok = false;
        if (m_firstAboveTime == 0)
        {
            m_firstAboveTime = now + m_interval;
        }
        else if (After(now, m_firstAboveTime))
        {
            ok = true;
        }
        return ok;
    }

    Ptr<QueueDiscItem> DoDequeue() override
    {
        Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
        if (!item)
        {
            m_dropping = false;
            return nullptr;
        }
        const uint32_t now = Now();
        const bool okToDrop = OkToDrop(item, now);
        if (m_dropping)
        {
            if (!okToDrop)
            {
                m_dropping = false;
            }
            else if (AfterEq(now, m_dropNext))
            {
                while (m_dropping && AfterEq(now, m_dropNext))
                {
                    ++m_count;
                    m_recInvSqrt = NewtonStep(m_recInvSqrt, m_count);
                    if (m_useEcn && Mark(item, TARGET_EXCEEDED_MARK))
                    {
                        m_dropNext = ControlLaw(m_linuxMark ? m_dropNext : now, m_interval, m_recInvSqrt);
                        return item;
                    }
                    DropAfterDequeue(item, TARGET_EXCEEDED_DROP);
                    item = GetInternalQueue(0)->Dequeue();
                    if (!OkToDrop(item, now))
                    {
                        m_dropping = false;
                    }
                    else
                    {
                        m_dropNext = ControlLaw(m_dropNext, m_interval, m_recInvSqrt);
                    }
                }
            }
        }
        else if (okToDrop)
        {
            if (!(m_useEcn && Mark(item, TARGET_EXCEEDED_MARK)))
            {
                DropAfterDequeue(item, TARGET_EXCEEDED_DROP);
                item = GetInternalQueue(0)->Dequeue();
                OkToDrop(item, now);
            }
            m_dropping = true;
            const int delta = m_count - m_lastCount;
            if (delta > 1 && Before(now - m_dropNext, 16 * m_interval))
            {
                m_count = delta;
                m_recInvSqrt = NewtonStep(m_recInvSqrt, m_count);
            }
            else
            {
                m_count = 1;
                m_recInvSqrt = ~0U >> REC_INV_SQRT_SHIFT;
            }
            m_lastCount = m_count;
            m_dropNext = ControlLaw(now, m_interval, m_recInvSqrt);
        }
        // ns-3 dereferences item here for the CE-threshold test (a null item after the
        // last packet was dropped is only safe because the threshold is off)
        return item;
    }

    bool m_linuxMark{false};
    Callback<uint32_t> m_backlog;
    bool m_useEcn{false};
    uint32_t m_minBytes{0};
    uint32_t m_interval{0};
    uint32_t m_target{0};
    uint32_t m_count{0};
    uint32_t m_lastCount{0};
    bool m_dropping{false};
    uint16_t m_recInvSqrt{static_cast<uint16_t>(~0U >> REC_INV_SQRT_SHIFT)};
    uint32_t m_firstAboveTime{0};
    uint32_t m_dropNext{0};
};

NS_OBJECT_ENSURE_REGISTERED(LinuxCoDelQueueDisc);

// ns3::LinuxFqCoDelQueueDisc: ns-3 3.44's FqCoDelQueueDisc (fq-codel-queue-disc.cc; the
// set-associative hash left out: off in the grid) with LinuxCoDelQueueDisc flow queues and
//   LinuxMtuBacklog    (QDISC.md 2) the flows' "backlog <= MTU: do not drop" test reads the
//                      whole queue disc's backlog (Linux fq_codel_dequeue passes
//                      &sch->qstats.backlog to codel_dequeue); ns-3: the flow's own queue.
//   LinuxEmptyNewFlow  (QDISC.md 3) a new flow found empty moves to old_flows only if that
//                      list is not empty, else leaves the lists (Linux fq_codel_dequeue);
//                      ns-3: always to old_flows.
//   LinuxMarkSchedule  passed to every flow's LinuxCoDelQueueDisc (QDISC.md 1).
// It derives from FqCoDelQueueDisc for its attributes (read back with GetAttribute), its
// quantum and so that qdisc.cc reports it as an FQ-CoDel (fq_flow_queues).
class LinuxFqCoDelQueueDisc : public FqCoDelQueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::LinuxFqCoDelQueueDisc")
                .SetParent<FqCoDelQueueDisc>()
                .SetGroupName("TrafficControl")
                .AddConstructor<LinuxFqCoDelQueueDisc>()
                .AddAttribute("LinuxMtuBacklog", "QDISC.md 2", BooleanValue(false),
                              MakeBooleanAccessor(&LinuxFqCoDelQueueDisc::m_linuxMtu), MakeBooleanChecker())
                .AddAttribute("LinuxEmptyNewFlow", "QDISC.md 3", BooleanValue(false),
                              MakeBooleanAccessor(&LinuxFqCoDelQueueDisc::m_linuxEmpty), MakeBooleanChecker())
                .AddAttribute("LinuxMarkSchedule", "QDISC.md 1", BooleanValue(false),
                              MakeBooleanAccessor(&LinuxFqCoDelQueueDisc::m_linuxMark), MakeBooleanChecker());
        return tid;
    }

  private:
    bool CheckConfig() override
    {
        if (GetNQueueDiscClasses() > 0 || GetNInternalQueues() > 0)
        {
            return false;
        }
        if (!GetQuantum())
        {
            Ptr<NetDeviceQueueInterface> ndqi = GetNetDeviceQueueInterface();
            Ptr<NetDevice> dev;
            if (ndqi && (dev = ndqi->GetObject<NetDevice>()))
            {
                SetQuantum(dev->GetMtu());
            }
            if (!GetQuantum())
            {
                return false;
            }
        }
        BooleanValue b;
        GetAttribute("EnableSetAssociativeHash", b);
        NS_ABORT_MSG_IF(b.Get(), "LinuxFqCoDelQueueDisc: no set-associative hash");
        GetAttribute("UseL4s", b);
        NS_ABORT_MSG_IF(b.Get(), "LinuxFqCoDelQueueDisc: no L4S");
        return true;
    }

    void InitializeParams() override
    {
        BooleanValue b;
        GetAttribute("UseEcn", b);
        m_useEcn = b.Get();
        UintegerValue u;
        GetAttribute("Flows", u);
        m_flows = u.Get();
        GetAttribute("DropBatchSize", u);
        m_dropBatchSize = u.Get();
        GetAttribute("Perturbation", u);
        m_perturbation = u.Get();
        StringValue interval;
        StringValue target;
        GetAttribute("Interval", interval);
        GetAttribute("Target", target);
        m_flowFactory.SetTypeId("ns3::FqCoDelFlow");
        m_queueDiscFactory.SetTypeId("ns3::LinuxCoDelQueueDisc");
        m_queueDiscFactory.Set("MaxSize", QueueSizeValue(GetMaxSize()));
        m_queueDiscFactory.Set("Interval", interval);
        m_queueDiscFactory.Set("Target", target);
        m_queueDiscFactory.Set("LinuxMarkSchedule", BooleanValue(m_linuxMark));
    }

    uint32_t TotalBytes() const
    {
        return GetNBytes();
    }

    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        NS_ABORT_MSG_IF(GetNPacketFilters() > 0, "LinuxFqCoDelQueueDisc: no packet filters");
        const uint32_t h = item->Hash(m_perturbation) % m_flows;
        Ptr<FqCoDelFlow> flow;
        auto it = m_flowsIndices.find(h);
        if (it == m_flowsIndices.end())
        {
            flow = m_flowFactory.Create<FqCoDelFlow>();
            Ptr<QueueDisc> qd = m_queueDiscFactory.Create<QueueDisc>();
            Ptr<LinuxCoDelQueueDisc> codel = DynamicCast<LinuxCoDelQueueDisc>(qd);
            codel->SetAttribute("UseEcn", BooleanValue(m_useEcn));
            if (m_linuxMtu)
            {
                codel->SetBacklogSource(MakeCallback(&LinuxFqCoDelQueueDisc::TotalBytes, this));
            }
            qd->Initialize();
            flow->SetQueueDisc(qd);
            flow->SetIndex(h);
            AddQueueDiscClass(flow);
            m_flowsIndices[h] = GetNQueueDiscClasses() - 1;
        }
        else
        {
            flow = StaticCast<FqCoDelFlow>(GetQueueDiscClass(it->second));
        }
        if (flow->GetStatus() == FqCoDelFlow::INACTIVE)
        {
            flow->SetStatus(FqCoDelFlow::NEW_FLOW);
            flow->SetDeficit(GetQuantum());
            m_newFlows.push_back(flow);
        }
        flow->GetQueueDisc()->Enqueue(item);
        if (GetCurrentSize() > GetMaxSize())
        {
            Drop();
        }
        return true;
    }

    Ptr<QueueDiscItem> DoDequeue() override
    {
        Ptr<FqCoDelFlow> flow;
        Ptr<QueueDiscItem> item;
        do
        {
            bool found = false;
            bool fromNew = false;
            while (!found && !m_newFlows.empty())
            {
                flow = m_newFlows.front();
                if (flow->GetDeficit() <= 0)
                {
                    flow->IncreaseDeficit(GetQuantum());
                    flow->SetStatus(FqCoDelFlow::OLD_FLOW);
                    m_oldFlows.splice(m_oldFlows.end(), m_newFlows, m_newFlows.begin());
                }
                else
                {
                    found = true;
                    fromNew = true;
                }
            }
            while (!found && !m_oldFlows.empty())
            {
                flow = m_oldFlows.front();
                if (flow->GetDeficit() <= 0)
                {
                    flow->IncreaseDeficit(GetQuantum());
                    m_oldFlows.splice(m_oldFlows.end(), m_oldFlows, m_oldFlows.begin());
                }
                else
                {
                    found = true;
                }
            }
            if (!found)
            {
                return nullptr;
            }
            item = flow->GetQueueDisc()->Dequeue();
            if (!item)
            {
                // ns-3: a flow from new_flows always goes to old_flows (the test below is true
                // whenever the flow came from new_flows); Linux: only if old_flows is not empty.
                const bool toOld = m_linuxEmpty ? (fromNew && !m_oldFlows.empty()) : !m_newFlows.empty();
                if (toOld)
                {
                    flow->SetStatus(FqCoDelFlow::OLD_FLOW);
                    m_oldFlows.push_back(flow);
                    m_newFlows.pop_front();
                }
                else
                {
                    flow->SetStatus(FqCoDelFlow::INACTIVE);
                    (fromNew ? m_newFlows : m_oldFlows).pop_front();
                }
            }
        } while (!item);
        flow->IncreaseDeficit(item->GetSize() * -1);
        return item;
    }

    void Drop()
    {
        uint32_t maxBacklog = 0;
        uint32_t index = 0;
        for (uint32_t i = 0; i < GetNQueueDiscClasses(); i++)
        {
            const uint32_t bytes = GetQueueDiscClass(i)->GetQueueDisc()->GetNBytes();
            if (bytes > maxBacklog)
            {
                maxBacklog = bytes;
                index = i;
            }
        }
        uint32_t len = 0;
        uint32_t count = 0;
        const uint32_t threshold = maxBacklog >> 1;
        Ptr<QueueDisc> qd = GetQueueDiscClass(index)->GetQueueDisc();
        do
        {
            Ptr<QueueDiscItem> item = qd->GetInternalQueue(0)->Dequeue();
            DropAfterDequeue(item, OVERLIMIT_DROP);
            len += item->GetSize();
        } while (++count < m_dropBatchSize && len < threshold);
    }

    bool m_linuxMtu{false};
    bool m_linuxEmpty{false};
    bool m_linuxMark{false};
    bool m_useEcn{true};
    uint32_t m_flows{1024};
    uint32_t m_dropBatchSize{64};
    uint32_t m_perturbation{0};
    std::list<Ptr<FqCoDelFlow>> m_newFlows;
    std::list<Ptr<FqCoDelFlow>> m_oldFlows;
    std::map<uint32_t, uint32_t> m_flowsIndices;
    ObjectFactory m_flowFactory;
    ObjectFactory m_queueDiscFactory;
};

NS_OBJECT_ENSURE_REGISTERED(LinuxFqCoDelQueueDisc);

// ---------------------------------------------------------------------------------------------
// ns3::TcpLinuxRenoAttr, ns3::TcpCubicAttr: TcpLinuxReno / TcpCubic with
//   LinuxRtoSsthresh   an RTO during fast recovery or CWR keeps ssthresh, as Linux
//                      tcp_enter_loss (a new ssthresh only from Open or Disorder, once the
//                      recovery point is acked, or at the first timeout of a loss episode).
//                      ns-3 3.44 TcpSocketBase::ReTxTimeout recomputes it unless the state is
//                      CA_LOSS with the head retransmitted: an RTO in CA_RECOVERY halves the
//                      window a second time.
//   LinuxExitAcked     on the ACK that ends fast recovery the window grows by the segments
//                      this ACK newly delivered, as Linux tcp_ack (delivered =
//                      tcp_newly_delivered(), then tcp_cong_control -> tcp_cong_avoid(sk, ack,
//                      acked_sacked): segments SACKed earlier in the recovery were counted in
//                      tp->delivered when SACKed). ns-3 3.44 TcpSocketBase::ProcessAck passes
//                      IncreaseWindow every segment from the old SND.UNA to the ACK, those SACKed
//                      during the recovery included ("segsAcked = (ackNumber - oldHeadSequence)
//                      / segmentSize"): with a 3-packet window the ACK that closes a hole under
//                      6-8 SACKed segments adds 2-3 packets at once.
// and, TcpLinuxRenoAttr only (Linux net/ipv4/tcp_cong.c, tcp_input.c):
//   LinuxSsthreshPkts  ssthresh = max(cwnd >> 1, 2) in whole packets, as tcp_reno_ssthresh
//                      (ns-3 halves the byte window: 6.5 packets give 3.25).
//   LinuxCongAvoid     tcp_reno_cong_avoid: the cwnd-limited test before slow start too, and
//                      the segments slow start leaves over go to the additive increase.
//   LinuxCwndCnt       (also TcpCubicAttr) the additive-increase counter cleared when a
//                      reduction starts, as tcp_init_cwnd_reduction / tcp_enter_loss clear
//                      tp->snd_cwnd_cnt (ns-3's private m_cWndCnt is never cleared; Reno: this
//                      switch keeps its own counter; CUBIC: TcpCubic's m_cWndCnt is cleared;
//                      both in GetSsThresh, which ns-3 calls only from EnterCwr, EnterRecovery
//                      and ReTxTimeout, and on CA_LOSS).
// ReTxTimeout calls GetSsThresh while the state is still CA_RECOVERY / CA_CWR; EnterRecovery
// calls it just after CongestionStateSet(CA_RECOVERY), which the flag tells apart. ProcessAck
// calls CongestionStateSet(CA_OPEN) while the state is still CA_RECOVERY, then IncreaseWindow
// on the same ACK; tcb->m_lastAckedSackedBytes is that ACK's newly delivered bytes (Linux's
// delivered). With every switch off both are TcpLinuxReno / TcpCubic.
// TcpCubic's m_cWndCnt is private: a pointer to it, formed by an explicit instantiation
// (which may name private members, [temp.spec.general]), for TcpCubicAttr's LinuxCwndCnt.
uint32_t TcpCubic::*CubicCwndCnt();

template <uint32_t TcpCubic::*M>
struct CubicCwndCntAccess
{
    friend uint32_t TcpCubic::*CubicCwndCnt()
    {
        return M;
    }
};

template struct CubicCwndCntAccess<&TcpCubic::m_cWndCnt>;

template <class Base>
class RtoSsthresh : public Base
{
  public:
    static TypeId GetTypeId();

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        const bool entering = m_entering;
        m_entering = false;
        m_cnt = 0; // every caller starts a reduction (EnterCwr, EnterRecovery, ReTxTimeout):
                   // tcp_init_cwnd_reduction clears snd_cwnd_cnt (LinuxCwndCnt)
        ClearCubicCnt();
        if (m_linux && !entering &&
            (tcb->m_congState == TcpSocketState::CA_RECOVERY || tcb->m_congState == TcpSocketState::CA_CWR))
        {
            return tcb->m_ssThresh; // tcp_enter_loss: "not yet made inside this window" is false
        }
        if constexpr (std::is_same_v<Base, TcpLinuxReno>)
        {
            if (m_linuxSsthreshPkts)
            {
                // tcp_reno_ssthresh: max(tcp_snd_cwnd(tp) >> 1U, 2U), in whole packets
                const uint32_t cwnd = tcb->m_cWnd / tcb->m_segmentSize;
                return std::max<uint32_t>(cwnd >> 1U, 2U) * tcb->m_segmentSize;
            }
        }
        return Base::GetSsThresh(tcb, bytesInFlight);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t newState) override
    {
        m_entering = newState == TcpSocketState::CA_RECOVERY;
        if (newState == TcpSocketState::CA_LOSS)
        {
            m_cnt = 0; // tcp_enter_loss: tp->snd_cwnd_cnt = 0 (ReTxTimeout may keep ssthresh)
            ClearCubicCnt();
        }
        m_exiting = newState == TcpSocketState::CA_OPEN && tcb->m_congState == TcpSocketState::CA_RECOVERY;
        Base::CongestionStateSet(tcb, newState);
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (m_exiting && m_linuxExit)
        {
            segmentsAcked = tcb->m_lastAckedSackedBytes / tcb->m_segmentSize; // tcp_newly_delivered
        }
        m_exiting = false;
        if constexpr (std::is_same_v<Base, TcpLinuxReno>)
        {
            if (m_linuxCongAvoid || m_linuxCwndCnt)
            {
                // LinuxCongAvoid, tcp_reno_cong_avoid: no growth unless tcp_is_cwnd_limited
                // (checked in slow start too: ns-3 checks it in congestion avoidance only), and
                // the segments left over when slow start reaches ssthresh go to
                // tcp_cong_avoid_ai (ns-3 drops them). tcp_is_cwnd_limited's slow-start clause
                // (cwnd < 2 * max_packets_out) is not modelled: ns-3's flag (set at each send)
                // stands for tp->is_cwnd_limited.
                if (m_linuxCongAvoid && !tcb->m_isCwndLimited)
                {
                    return;
                }
                if (tcb->m_cWnd < tcb->m_ssThresh)
                {
                    segmentsAcked = this->Base::SlowStart(tcb, segmentsAcked);
                    if (segmentsAcked == 0 || !m_linuxCongAvoid)
                    {
                        return;
                    }
                }
                if (!m_linuxCwndCnt)
                {
                    this->Base::CongestionAvoidance(tcb, segmentsAcked);
                    return;
                }
                // LinuxCwndCnt: TcpLinuxReno::CongestionAvoidance (tcp_cong_avoid_ai, w = cwnd in
                // whole packets) on a counter that is cleared when a reduction starts, as Linux's
                // snd_cwnd_cnt (ns-3's m_cWndCnt is never cleared: the ACKs counted before a
                // recovery add to the first increase after it).
                if (!tcb->m_isCwndLimited)
                {
                    return; // as TcpLinuxReno (m_suppressIncreaseIfCwndLimited)
                }
                const uint32_t w = std::max<uint32_t>(tcb->m_cWnd / tcb->m_segmentSize, 1);
                if (m_cnt >= w)
                {
                    m_cnt = 0;
                    tcb->m_cWnd += tcb->m_segmentSize;
                }
                m_cnt += segmentsAcked;
                if (m_cnt >= w)
                {
                    const uint32_t delta = m_cnt / w;
                    m_cnt -= delta * w;
                    tcb->m_cWnd += delta * tcb->m_segmentSize;
                }
                return;
            }
        }
        Base::IncreaseWindow(tcb, segmentsAcked);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<RtoSsthresh<Base>>(this);
    }

    bool m_linux{false};     // the attributes (public for RtoSsthreshTid's accessors)
    bool m_linuxExit{false};
    bool m_linuxSsthreshPkts{false}; // TcpLinuxRenoAttr only
    bool m_linuxCongAvoid{false};    // TcpLinuxRenoAttr only
    bool m_linuxCwndCnt{false};      // both: Reno's own counter, TcpCubic's m_cWndCnt cleared

    // LinuxCwndCnt for TcpCubicAttr: clear TcpCubic's m_cWndCnt where Linux clears
    // snd_cwnd_cnt (bictcp_cong_avoid counts ACKs in it through tcp_cong_avoid_ai).
    void ClearCubicCnt()
    {
        if constexpr (std::is_same_v<Base, TcpCubic>)
        {
            if (m_linuxCwndCnt)
            {
                static_cast<TcpCubic&>(*this).*CubicCwndCnt() = 0;
            }
        }
    }

  private:
    bool m_entering{false};
    bool m_exiting{false};
    uint32_t m_cnt{0}; // LinuxCwndCnt's snd_cwnd_cnt
};

template <class Base>
TypeId
RtoSsthreshTid(const char* name)
{
    return TypeId(name)
        .template SetParent<Base>()
        .SetGroupName("Internet")
        .template AddConstructor<RtoSsthresh<Base>>()
        .AddAttribute("LinuxRtoSsthresh", "keep ssthresh on an RTO during recovery (Linux)", BooleanValue(false),
                      MakeBooleanAccessor(&RtoSsthresh<Base>::m_linux), MakeBooleanChecker())
        .AddAttribute("LinuxExitAcked",
                      "grow the window on the recovery-ending ACK by its newly delivered segments (Linux tcp_ack)",
                      BooleanValue(false), MakeBooleanAccessor(&RtoSsthresh<Base>::m_linuxExit), MakeBooleanChecker())
        .AddAttribute("LinuxSsthreshPkts",
                      "TcpLinuxRenoAttr: ssthresh = max(cwnd >> 1, 2) in whole packets (Linux tcp_reno_ssthresh)",
                      BooleanValue(false), MakeBooleanAccessor(&RtoSsthresh<Base>::m_linuxSsthreshPkts),
                      MakeBooleanChecker())
        .AddAttribute("LinuxCongAvoid",
                      "TcpLinuxRenoAttr: the cwnd-limited test in slow start too and the slow-start leftover to "
                      "the additive increase (Linux tcp_reno_cong_avoid)",
                      BooleanValue(false), MakeBooleanAccessor(&RtoSsthresh<Base>::m_linuxCongAvoid),
                      MakeBooleanChecker())
        .AddAttribute("LinuxCwndCnt",
                      "the additive-increase counter cleared when a reduction starts "
                      "(Linux tcp_init_cwnd_reduction / tcp_enter_loss: snd_cwnd_cnt = 0)",
                      BooleanValue(false), MakeBooleanAccessor(&RtoSsthresh<Base>::m_linuxCwndCnt),
                      MakeBooleanChecker());
}

template <>
inline TypeId
RtoSsthresh<TcpLinuxReno>::GetTypeId()
{
    static TypeId tid = RtoSsthreshTid<TcpLinuxReno>("ns3::TcpLinuxRenoAttr");
    return tid;
}

template <>
inline TypeId
RtoSsthresh<TcpCubic>::GetTypeId()
{
    static TypeId tid = RtoSsthreshTid<TcpCubic>("ns3::TcpCubicAttr");
    return tid;
}

using TcpLinuxRenoAttr = RtoSsthresh<TcpLinuxReno>;
using TcpCubicAttr = RtoSsthresh<TcpCubic>;
NS_OBJECT_ENSURE_REGISTERED(TcpLinuxRenoAttr);
NS_OBJECT_ENSURE_REGISTERED(TcpCubicAttr);

// ---------------------------------------------------------------------------------------------
// ns3::PrrAttrRecovery (QDISC_ATTR_PRR=1 replaces the grid's --recovery=prr-sack type,
// ccsim-tcp.h's PrrSackRecovery): that PRR (ns-3 3.44's TcpPrrRecovery without the extra
// segment per duplicate ACK) with a switch for each remaining difference from Linux
// tcp_cwnd_reduction (net/ipv4/tcp_input.c), which ccsim follows (tcp/sender.rs):
//   LinuxPriorCwnd  RecoverFS is the window when the reduction starts (tcp_init_cwnd_reduction:
//                   tp->prior_cwnd = tcp_snd_cwnd(tp)); ns-3: the pipe at that moment (RFC 6937),
//                   already less the three SACKed segments and the lost one.
//   LinuxPackets    sndcnt in whole packets (ssthresh, pipe, prr_delivered, prr_out, RecoverFS
//                   as packets; Linux counts packets), and PRR-SSRB's extra packet when the ACK
//                   advances SND.UNA (FLAG_SND_UNA_ADVANCED && !newly_lost: here a non-duplicate
//                   ACK; ns-3: tcb->m_isRetransDataAcked). ns-3: bytes, so a ceil() can ask for
//                   a fraction of a segment, which the sender's silly-window test does not send.
// With both off it is PrrSackRecovery (checked: identical JSON on one point).
class PrrAttrRecovery : public TcpRecoveryOps
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::PrrAttrRecovery")
                .SetParent<TcpRecoveryOps>()
                .SetGroupName("Internet")
                .AddConstructor<PrrAttrRecovery>()
                .AddAttribute("LinuxPriorCwnd", "RecoverFS = cwnd at entry (Linux prior_cwnd)", BooleanValue(false),
                              MakeBooleanAccessor(&PrrAttrRecovery::m_linuxPriorCwnd), MakeBooleanChecker())
                .AddAttribute("LinuxPackets", "sndcnt in whole packets, SSRB on SND.UNA advance (Linux)",
                              BooleanValue(false), MakeBooleanAccessor(&PrrAttrRecovery::m_linuxPackets),
                              MakeBooleanChecker());
        return tid;
    }

    std::string GetName() const override
    {
        return "PrrAttrRecovery";
    }

    void EnterRecovery(Ptr<TcpSocketState> tcb, uint32_t, uint32_t, uint32_t deliveredBytes) override
    {
        m_prrOut = 0;
        m_prrDelivered = 0;
        m_recoveryFlightSize = std::max<uint32_t>(m_linuxPriorCwnd ? tcb->m_cWnd : tcb->m_bytesInFlight, 1);
        DoRecovery(tcb, deliveredBytes, true);
    }

    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes, bool isDupAck) override
    {
        if (deliveredBytes == 0)
        {
            return;
        }
        m_prrDelivered += deliveredBytes;
        if (m_linuxPackets)
        {
            // tcp_cwnd_reduction, in packets (delivered and sent data are whole segments here)
            const int64_t mss = tcb->m_segmentSize;
            const int64_t pipe = (int64_t(tcb->m_bytesInFlight) + mss - 1) / mss;
            const int64_t ssthresh = tcb->m_ssThresh / mss;
            const int64_t delivered = (m_prrDelivered + mss - 1) / mss;
            const int64_t out = (m_prrOut + mss - 1) / mss;
            const int64_t newly = (deliveredBytes + mss - 1) / mss;
            const int64_t prior = std::max<int64_t>(m_recoveryFlightSize / mss, 1);
            const int64_t delta = ssthresh - pipe;
            int64_t sndcnt;
            if (delta < 0)
            {
                sndcnt = (ssthresh * delivered + prior - 1) / prior - out;
            }
            else
            {
                sndcnt = std::max<int64_t>(delivered - out, newly);
                if (!isDupAck)
                {
                    sndcnt++;
                }
                sndcnt = std::min(delta, sndcnt);
            }
            sndcnt = std::max<int64_t>(sndcnt, out ? 0 : 1);
            tcb->m_cWnd = static_cast<uint32_t>(std::max<int64_t>((pipe + sndcnt) * mss, 0));
            tcb->m_cWndInfl = tcb->m_cWnd;
            return;
        }
        // PrrSackRecovery::DoRecovery, line for line
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
            int64_t limit = std::max<int64_t>(static_cast<int64_t>(m_prrDelivered) - m_prrOut, deliveredBytes);
            if (tcb->m_isRetransDataAcked)
            {
                limit += tcb->m_segmentSize;
            }
            sendCount = std::min<int64_t>(limit, ssthresh - pipe);
        }
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
        return CopyObject<PrrAttrRecovery>(this);
    }

  private:
    bool m_linuxPriorCwnd{false};
    bool m_linuxPackets{false};
    uint32_t m_prrDelivered = 0;
    uint32_t m_prrOut = 0;
    uint32_t m_recoveryFlightSize = 1;
};

NS_OBJECT_ENSURE_REGISTERED(PrrAttrRecovery);

// ---------------------------------------------------------------------------------------------
// ns3::TcpDctcpAttr (QDISC_ATTR_DCTCP=1 replaces ns3::TcpDctcp, on the senders and on the
// receiver, which echoes CE): ns-3 3.44's TcpDctcp, subclassed, with one switch.
//   LinuxAckNow  on a change of CE state the receiver ACKs the current segment at once, as
//                Linux's dctcp_ece_ack_update (net/ipv4/tcp_dctcp.h: "CE state has changed,
//                force an immediate ACK to reflect the new CE state", icsk_ack.pending |=
//                ICSK_ACK_NOW), after the delayed ACK of the earlier state that both send.
//                ns-3: TcpDctcp::CeState0to1 / CeState1to0 send that earlier ACK (through
//                SendEmptyPacket, which clears the delayed-ACK count), then
//                TcpSocketBase::ReceivedData counts the current segment as the first of a new
//                delayed ACK (ECE or not, it leaves at the next segment or after DelAckTimeout).
//                Here, when ReceivedData has delayed it (CA_EVENT_DELAYED_ACK after the change),
//                an event at the same instant sends it as ReceivedData's non-delayed branch does
//                (CA_EVENT_NON_DELAYED_ACK, ACK|ECE while in ECN_CE_RCVD / ECN_SENDING_ECE);
//                SendEmptyPacket cancels the delayed-ACK timer and count, so the next delayed
//                ACK counts from the segment after, as Linux after tcp_send_ack.
// TcpDctcp's m_ceState and m_delayedAckReserved are private: the copies here follow the same
// events. With the switch off it is TcpDctcp (checked: identical JSON, `ns3-dctcp-private`).
class TcpDctcpAttr : public TcpDctcp
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::TcpDctcpAttr")
                .SetParent<TcpDctcp>()
                .SetGroupName("Internet")
                .AddConstructor<TcpDctcpAttr>()
                .AddAttribute("LinuxAckNow",
                              "ACK the current segment at once on a change of CE state (Linux "
                              "dctcp_ece_ack_update: ICSK_ACK_NOW)",
                              BooleanValue(false), MakeBooleanAccessor(&TcpDctcpAttr::m_linuxAckNow),
                              MakeBooleanChecker());
        return tid;
    }

    TcpDctcpAttr() = default;

    TcpDctcpAttr(const TcpDctcpAttr& sock)
        : TcpDctcp(sock),
          m_linuxAckNow(sock.m_linuxAckNow),
          m_ce(sock.m_ce),
          m_reserved(sock.m_reserved)
    {
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpDctcpAttr>(this);
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        bool changed = false;
        switch (event)
        {
        case TcpSocketState::CA_EVENT_ECN_IS_CE:
            changed = !m_ce;
            m_ce = true;
            break;
        case TcpSocketState::CA_EVENT_ECN_NO_CE:
            changed = m_ce;
            m_ce = false;
            break;
        case TcpSocketState::CA_EVENT_DELAYED_ACK:
            m_reserved = true;
            break;
        case TcpSocketState::CA_EVENT_NON_DELAYED_ACK:
            m_reserved = false;
            break;
        default:
            break;
        }
        TcpDctcp::CwndEvent(tcb, event);
        if (changed && m_linuxAckNow)
        {
            // TcpSocketBase::ForwardUp raises the CE event before DoForwardUp -> ReceivedData
            // adds the segment: the ACK goes after it, at the same instant.
            m_reserved = false; // until ReceivedData says whether it delayed the ACK
            Simulator::ScheduleNow(&TcpDctcpAttr::AckNow, this, tcb);
        }
    }

  private:
    void AckNow(Ptr<TcpSocketState> tcb)
    {
        if (!m_reserved)
        {
            return; // ReceivedData ACKed it already (gap, or the delayed-ACK count reached)
        }
        CwndEvent(tcb, TcpSocketState::CA_EVENT_NON_DELAYED_ACK);
        if (tcb->m_ecnState == TcpSocketState::ECN_CE_RCVD || tcb->m_ecnState == TcpSocketState::ECN_SENDING_ECE)
        {
            tcb->m_sendEmptyPacketCallback(TcpHeader::ACK | TcpHeader::ECE);
            tcb->m_ecnState = TcpSocketState::ECN_SENDING_ECE;
        }
        else
        {
            tcb->m_sendEmptyPacketCallback(TcpHeader::ACK);
        }
    }

    bool m_linuxAckNow{false};
    bool m_ce{false};       // TcpDctcp::m_ceState
    bool m_reserved{false}; // TcpDctcp::m_delayedAckReserved, as ReceivedData left it
};

NS_OBJECT_ENSURE_REGISTERED(TcpDctcpAttr);

} // namespace ns3

// QDISC_ATTR_PRR=1: the recovery type becomes PrrAttrRecovery (build_attr.sh calls this just after
// qdisc.cc's SetCcsimTcpDefaults, which sets --recovery's type; the grid uses prr-sack).
inline void
QdiscAttrRecovery()
{
    const char* t = std::getenv("QDISC_ATTR_PRR");
    if (t && std::string(t) == "1")
    {
        ns3::Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                                ns3::TypeIdValue(ns3::TypeId::LookupByName("ns3::PrrAttrRecovery")));
    }
}

// The PIE queue disc qdisc.cc installs (build_attr.sh substitutes this for "ns3::PieQueueDisc").
inline std::string
QdiscAttrPieType()
{
    const char* t = std::getenv("QDISC_ATTR_PIE");
    return t && *t ? t : "ns3::PieQueueDisc";
}

// The CoDel and FQ-CoDel queue discs qdisc.cc installs (QDISC_ATTR_CODEL, QDISC_ATTR_FQCODEL,
// defaults ns3::CoDelQueueDisc and ns3::FqCoDelQueueDisc), and its TCP congestion control:
// with QDISC_ATTR_CC=1, ns3::TcpLinuxReno and ns3::TcpCubic become their *Attr copies above.
inline std::string
QdiscAttrCoDelType()
{
    const char* t = std::getenv("QDISC_ATTR_CODEL");
    return t && *t ? t : "ns3::CoDelQueueDisc";
}

inline std::string
QdiscAttrFqCoDelType()
{
    const char* t = std::getenv("QDISC_ATTR_FQCODEL");
    return t && *t ? t : "ns3::FqCoDelQueueDisc";
}

inline std::string
QdiscAttrCcType(const std::string& type)
{
    const char* t = std::getenv("QDISC_ATTR_CC");
    if (!t || std::string(t) != "1")
    {
        return type;
    }
    return type == "ns3::TcpLinuxReno" || type == "ns3::TcpCubic" ? type + "Attr" : type;
}

// QDISC_ATTR_DCTCP=1: qdisc.cc's DCTCP type (senders and receiver) becomes ns3::TcpDctcpAttr
// (build_attr.sh substitutes this for "ns3::TcpDctcp").
inline std::string
QdiscAttrDctcpType()
{
    const char* t = std::getenv("QDISC_ATTR_DCTCP");
    return t && std::string(t) == "1" ? "ns3::TcpDctcpAttr" : "ns3::TcpDctcp";
}

// QDISC_ATTR_TRACE=FILE (optional QDISC_ATTR_TRACE_INTERVAL, seconds, default 0.01): a CSV time
// series of every flow (cwnd, ssthresh, bytes in flight in packets, srtt, TCP state, bytes
// acked, retransmissions, packets in the queue disc) as dumbbell.cc's --traceFile, plus its
// #event (state changes) and #retx lines from FlowTracer and one #qdrop line per queue-disc
// drop (time, reason, source address, sequence number), and with LinuxPieQueueDisc one #pie
// line per probability update (time, probability, queue delay ms, burst allowance ms); with
// QDISC_ATTR_TRACE_PKTS=1 also #qenq / #qdeq lines per data packet (OnPkt) and a #qmark line
// per CE mark (OnMark). Only
// trace sinks and sampling events are added: the run is otherwise the same (checked: the JSON
// result is unchanged).
// build_attr.sh calls this before Simulator::Run(); a template, because FlowTracer is defined
// in ccsim-tcp.h, which qdisc.cc includes after this file.
namespace qdisc_attr_trace
{
inline std::ofstream out;

inline void
OnDrop(const char* when, ns3::Ptr<const ns3::QueueDiscItem> item, const char* reason)
{
    ns3::Ptr<const ns3::Ipv4QueueDiscItem> ip = ns3::DynamicCast<const ns3::Ipv4QueueDiscItem>(item);
    ns3::TcpHeader tcp;
    ns3::Ipv4Address src;
    if (ip)
    {
        src = ip->GetHeader().GetSource();
        item->GetPacket()->PeekHeader(tcp);
    }
    out << "#qdrop," << ns3::Simulator::Now().GetSeconds() << "," << when << "," << reason << "," << src
        << "," << tcp.GetSequenceNumber().GetValue() << "\n";
}

// #qenq / #qdeq lines (QDISC_ATTR_TRACE_PKTS=1): every data packet entering the queue disc and
// leaving it for the device (time, source address, sequence number), for per-packet timelines.
inline void
OnPkt(const char* tag, ns3::Ptr<const ns3::QueueDiscItem> item)
{
    ns3::Ptr<const ns3::Ipv4QueueDiscItem> ip = ns3::DynamicCast<const ns3::Ipv4QueueDiscItem>(item);
    ns3::TcpHeader tcp;
    if (!ip || item->GetPacket()->GetSize() <= 60)
    {
        return;
    }
    item->GetPacket()->PeekHeader(tcp);
    out << tag << "," << ns3::Simulator::Now().GetSeconds() << "," << ip->GetHeader().GetSource() << ","
        << tcp.GetSequenceNumber().GetValue() << "\n";
}

// #qmark lines (QDISC_ATTR_TRACE_PKTS=1): every packet the queue disc marks CE (time, source
// address, sequence number, packets in the queue disc at the mark, reason).
inline ns3::Ptr<ns3::QueueDisc> markQd;

inline void
OnMark(ns3::Ptr<const ns3::QueueDiscItem> item, const char* reason)
{
    ns3::Ptr<const ns3::Ipv4QueueDiscItem> ip = ns3::DynamicCast<const ns3::Ipv4QueueDiscItem>(item);
    ns3::TcpHeader tcp;
    if (!ip)
    {
        return;
    }
    item->GetPacket()->PeekHeader(tcp);
    out << "#qmark," << ns3::Simulator::Now().GetSeconds() << "," << ip->GetHeader().GetSource() << ","
        << tcp.GetSequenceNumber().GetValue() << "," << markQd->GetNPackets() << "," << reason << "\n";
}

// #pie lines: LinuxPieQueueDisc's state after each probability update.
inline void
OnPieUpdate(double prob, double qdelay, double burst)
{
    out << "#pie," << ns3::Simulator::Now().GetSeconds() << "," << prob << "," << qdelay * 1e3 << "," << burst * 1e3
        << "\n";
}

template <typename Tracer>
void
Sample(std::vector<Tracer>* tracers, ns3::Ptr<ns3::QueueDisc> qd, uint32_t mss, ns3::Time interval)
{
    const double t = ns3::Simulator::Now().GetSeconds();
    for (const Tracer& tr : *tracers)
    {
        out << t << "," << tr.id << "," << tr.cwnd / double(mss) << "," << tr.ssthresh / double(mss) << ","
            << tr.inflight / double(mss) << "," << tr.srtt * 1e3 << ","
            << ns3::TcpSocketState::TcpCongStateName[tr.congState] << "," << tr.BytesAcked() << ","
            << tr.retransmits << "," << tr.segmentsSent << "," << qd->GetNPackets() << "\n";
    }
    ns3::Simulator::Schedule(interval, &Sample<Tracer>, tracers, qd, mss, interval);
}
} // namespace qdisc_attr_trace

template <typename Tracer>
void
QdiscAttrTrace(std::vector<Tracer>& tracers, ns3::Ptr<ns3::QueueDisc> qd, uint32_t mss)
{
    const char* f = std::getenv("QDISC_ATTR_TRACE");
    if (!f || !*f)
    {
        return;
    }
    const char* iv = std::getenv("QDISC_ATTR_TRACE_INTERVAL");
    const ns3::Time interval = ns3::Seconds(iv && *iv ? std::atof(iv) : 0.01);
    namespace T = qdisc_attr_trace;
    T::out.open(f);
    NS_ABORT_MSG_IF(!T::out, "cannot write " << f);
    T::out.precision(10); // times to the ns up to 10 s, 10 ns beyond
    T::out << "time_s,flow,cwnd_pkts,ssthresh_pkts,inflight_pkts,srtt_ms,state,bytes_acked,retransmits,"
              "segments_sent,qdisc_pkts\n";
    for (uint32_t i = 0; i < tracers.size(); ++i)
    {
        tracers[i].id = i;
        tracers[i].events = &T::out;
    }
    qd->TraceConnectWithoutContext("DropBeforeEnqueue", ns3::MakeBoundCallback(&T::OnDrop, "enqueue"));
    qd->TraceConnectWithoutContext("DropAfterDequeue", ns3::MakeBoundCallback(&T::OnDrop, "dequeue"));
    qd->TraceConnectWithoutContext("PieUpdate", ns3::MakeCallback(&T::OnPieUpdate)); // LinuxPieQueueDisc only
    const char* pk = std::getenv("QDISC_ATTR_TRACE_PKTS");
    if (pk && std::string(pk) == "1")
    {
        qd->TraceConnectWithoutContext("Enqueue", ns3::MakeBoundCallback(&T::OnPkt, "#qenq"));
        qd->TraceConnectWithoutContext("Dequeue", ns3::MakeBoundCallback(&T::OnPkt, "#qdeq"));
        T::markQd = qd;
        qd->TraceConnectWithoutContext("Mark", ns3::MakeCallback(&T::OnMark));
    }
    ns3::Simulator::Schedule(interval, &T::Sample<Tracer>, &tracers, qd, mss, interval);
}

#endif
