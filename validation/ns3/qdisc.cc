// ns-3 reference for ccsim's queue-discipline / ECN validation (validation/ns3/qdisc.py).
//
// The dumbbell of bench/ns3/dumbbell.cc (sender_i --access--> router --bottleneck--> receiver,
// one sender node per flow, 1 Gbps / 0 ms access links, the whole base RTT on the bottleneck),
// but the router's bottleneck egress gets an ns-3 traffic-control queue disc:
//
//   --qdisc=fifo|red|codel|fq_codel|pie   ns3::FifoQueueDisc, RedQueueDisc, CoDelQueueDisc,
//                                         FqCoDelQueueDisc, PieQueueDisc. ns-3 3.44 has no
//                                         DualPI2 queue disc (nor has ns-3-dev up to 3.46.1),
//                                         so dualpi2 is refused.
//   --buffer=N      the queue disc's hard limit (MaxSize = N packets; Linux `limit`).
//   --ecn=0|1       the queue disc's UseEcn (mark ECT packets instead of dropping them) and
//                   ns3::TcpSocketBase::UseEcn = On on every socket (senders set ECT(0)).
//   --cc=X          every flow's congestion control: newreno (ns3::TcpNewReno), linuxreno,
//                   cubic, bbr, newreno-flightsize (ccsim-tcp.h) or dctcp (ns3::TcpDctcp; the
//                   receiver node uses TcpDctcp too, since DCTCP's ECE echo is the receiver's
//                   congestion-control object in ns-3; needs --ecn=1).
//   --flows=N --starts=t0,t1,...          N flows, each BulkSend started at its time.
//
// The device under the queue disc. The bottleneck device keeps ns-3's flow control
// (NetDeviceQueueInterface): the queue disc hands a packet down only while the device queue
// has room, and the device queue holds --deviceQueue packets (default 1). So the queue disc,
// not the device, holds the standing queue: at most one packet is being serialised and one
// waits in the device queue, as in Linux with BQL over a driver ring that completes one
// packet at a time. No DynamicQueueLimits object is installed (ns-3's BQL): with a 1-packet
// device queue there is nothing for it to limit, and its adaptive limit would only let more
// packets (and their delay) sit below the AQM. Every other device (access links, the ACK
// direction) has flow control off, no queue disc and a queue large enough never to drop, as in
// dumbbell.cc; the program checks that no other queue disc is installed.
//
// Queue-disc parameters (ns-3 defaults differ from Linux's in several places; validation/ns3/
// QDISC.md has the table of every parameter in Linux, in ns-3 and what this program sets):
//   CoDel / FQ-CoDel  --codelTarget --codelInterval --codelMinBytes (default 1501: Linux stops
//                     dropping while backlog <= MTU, ns-3 while backlog < MinBytes)
//   FQ-CoDel          --fqFlows --fqQuantum (0: the device MTU, as Linux) --fqDropBatch
//   RED               --redMinTh --redMaxTh (packets) --redMaxP --redQW --redGentle
//                     --redWait --redHardDrop --redMeanPktSize; LinkBandwidth = --rate
//   PIE               --pieTarget --pieTupdate --pieAlpha --pieBeta --pieMaxBurst
//                     --pieDerandomize --pieDqRate --pieMarkEcnTh --pieCapDrop
// Step marking for DCTCP: --qdisc=red --redMinTh=K --redMaxTh=K --redQW=1 --redGentle=0
// --ecn=1 (an arriving packet is marked when the instantaneous queue is >= K packets).
//
// TCP as in dumbbell.cc / parking_lot.cc (SetCcsimTcpDefaults in ccsim-tcp.h): SACK,
// timestamps, window scaling, delayed ACK 2 / --delAckTimeout, MinRto 200 ms, IW 10, no
// pacing; --recovery, --clockGranularity and --rateSampler switch off ns-3 3.44's deviations
// from Linux exactly as there.
//
// Output: one JSON line on stdout:
//   flows[]     per flow: throughput_mbps (bytes cumulatively ACKed x 8 / (duration - start),
//               ccsim's definition), sink_throughput_mbps (sink bytes x 8 / duration),
//               bytes_received, bytes_acked, retransmits, fast_recoveries, rto_count,
//               rtt_mean_ms, rtt_min_ms, ce_received (data packets arriving at the receiver
//               with CE, counted from the IP header), ece_reductions (entries of the sender
//               into CA_CWR: window reductions triggered by ECE, at most one per window);
//   bottleneck  utilization (bytes that started serialisation x 8 / (rate x duration)),
//               packets_in (offered to the queue disc), tx_packets, drops (the hard limit:
//               buffer overflows), aqm_drops (drops the AQM chose), marks, drop_reasons and
//               mark_reasons (ns-3's QueueDisc::Stats by reason string, untouched),
//               qdelay_mean_ms / qdelay_p95_ms (the queue disc's SojournTime trace: enqueue
//               to dequeue, every packet it dequeued, also those CoDel then drops),
//               qdelay_total_mean_ms / _p95_ms (every transmitted packet: arrival at the
//               queue disc to start of serialisation, i.e. sojourn + device-queue wait),
//               queue_mean_pkts (time-averaged packets in the queue disc), device_queue_mean_pkts,
//               device_drops and other_queue_drops (both expected 0), fq_flow_queues (FQ-CoDel:
//               flow queues created, to see hash collisions; fq_quantum; fq_child_attributes:
//               a per-flow CoDel's attributes), qdisc_attributes (every attribute of the
//               installed queue disc as read back after the run).
//
// Build: bash bench/ns3/build.sh   (builds dumbbell, parking_lot and this program)

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "../../bench/ns3/ccsim-tcp.h" // FlowTracer, SetCcsimTcpDefaults, QueueAvg, ...

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#ifndef NS3_LIB_VERSION
#define NS3_LIB_VERSION "unknown" // set by build.sh from the library names
#endif

using namespace ns3;

namespace
{

// Delay samples (seconds): mean and 95th percentile (nearest rank).
struct DelaySamples
{
    std::vector<float> v;

    void Add(double s)
    {
        v.push_back(static_cast<float>(s));
    }

    void OnSojourn(Time t)
    {
        Add(t.GetSeconds());
    }

    double MeanMs() const
    {
        double sum = 0.0;
        for (float x : v)
        {
            sum += x;
        }
        return v.empty() ? std::nan("") : sum / v.size() * 1e3;
    }

    double QuantileMs(double q)
    {
        if (v.empty())
        {
            return std::nan("");
        }
        const size_t k = std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * v.size())) - 1);
        std::nth_element(v.begin(), v.begin() + k, v.end());
        return v[k] * 1e3;
    }
};

// The whole wait of each transmitted packet before serialisation: from its arrival at the
// queue disc to the start of its serialisation (the queue disc's sojourn plus the wait in the
// device queue below it), tracked by packet uid. Packets the queue disc drops are forgotten.
struct PacketWait
{
    std::unordered_map<uint64_t, double> arrived; // uid -> arrival at the queue disc
    DelaySamples total;
    QueueAvg deviceAvg;

    void OnQdiscEnqueue(Ptr<const QueueDiscItem> item)
    {
        arrived[item->GetPacket()->GetUid()] = Simulator::Now().GetSeconds();
    }

    void OnQdiscDrop(Ptr<const QueueDiscItem> item, const char*)
    {
        arrived.erase(item->GetPacket()->GetUid());
    }

    void OnDeviceDequeue(Ptr<const Packet> p)
    {
        auto it = arrived.find(p->GetUid());
        if (it != arrived.end())
        {
            total.Add(Simulator::Now().GetSeconds() - it->second);
            arrived.erase(it);
        }
    }
};

// CE-marked packets arriving at the receiver, per flow (by source address).
struct CeCounter
{
    std::map<uint32_t, uint32_t> flowOf; // source address -> flow index
    std::vector<uint64_t> ce;

    void OnRx(Ptr<const Packet> p, Ptr<Ipv4>, uint32_t)
    {
        Ipv4Header h;
        p->PeekHeader(h);
        if (h.GetEcn() != Ipv4Header::ECN_CE)
        {
            return;
        }
        auto it = flowOf.find(h.GetSource().Get());
        if (it != flowOf.end())
        {
            ++ce[it->second];
        }
    }
};

std::string
Num(double x)
{
    if (std::isnan(x) || std::isinf(x))
    {
        return "null";
    }
    std::ostringstream o;
    o << std::setprecision(10) << x;
    return o.str();
}

template <typename M>
std::string
JsonCounts(const M& m)
{
    std::ostringstream o;
    o << "{";
    bool first = true;
    for (const auto& [k, v] : m)
    {
        o << (first ? "" : ",") << JsonString(k) << ":" << v;
        first = false;
    }
    return o.str() + "}";
}

// Every attribute of an object (its TypeId and parents), as strings, read back.
std::string
AttributesJson(Ptr<Object> obj)
{
    std::ostringstream o;
    o << "{";
    bool first = true;
    for (TypeId tid = obj->GetInstanceTypeId(); tid != Object::GetTypeId(); tid = tid.GetParent())
    {
        for (uint32_t i = 0; i < tid.GetAttributeN(); ++i)
        {
            const TypeId::AttributeInformation info = tid.GetAttribute(i);
            if (!(info.flags & TypeId::ATTR_GET) || !info.accessor->HasGetter())
            {
                continue;
            }
            StringValue v;
            if (!obj->GetAttributeFailSafe(info.name, v) || info.name.find("List") != std::string::npos)
            {
                continue;
            }
            o << (first ? "" : ",") << JsonString(info.name) << ":" << JsonString(v.Get());
            first = false;
        }
    }
    return o.str() + "}";
}

// Which drop reasons are the hard limit (buffer overflow) rather than the AQM's choice.
bool
IsLimitDrop(const std::string& qdisc, const std::string& reason)
{
    if (reason == QueueDisc::INTERNAL_QUEUE_DROP || reason == FifoQueueDisc::LIMIT_EXCEEDED_DROP ||
        reason == CoDelQueueDisc::OVERLIMIT_DROP ||
        reason == std::string(QueueDisc::CHILD_QUEUE_DISC_DROP) + CoDelQueueDisc::OVERLIMIT_DROP)
    {
        return true; // FqCoDelQueueDisc::OVERLIMIT_DROP is the same string as CoDel's
    }
    // PIE's "Forced drop" is its queue limit; RED's "Forced drop" is avg >= max_th (AQM).
    return qdisc == "pie" && reason == PieQueueDisc::FORCED_DROP;
}

} // namespace

int
main(int argc, char* argv[])
{
    auto tSetup0 = std::chrono::steady_clock::now();

    std::string qdisc = "codel";
    bool ecn = false;
    std::string cc = "cubic";
    uint32_t nFlows = 1;
    std::string startList;
    std::string rate = "10Mbps";
    std::string delay = "20ms";
    uint32_t buffer = 1000;
    uint32_t deviceQueue = 1;
    uint32_t mss = 1448;
    double duration = 20.0;
    uint64_t seed = 1;
    std::string accessRate = "1Gbps";
    std::string accessDelay = "0ms";
    uint32_t delAckCount = 2;
    std::string delAckTimeout = "40ms";
    std::string minRto = "200ms";
    uint32_t bufBytes = 4u << 20;
    std::string recovery = "prr";
    std::string rateSampler = "ns3";
    std::string clockGranularity = "1ms";
    // CoDel / FQ-CoDel (Linux defaults)
    std::string codelTarget = "5ms";
    std::string codelInterval = "100ms";
    uint32_t codelMinBytes = 1501;
    uint32_t fqFlows = 1024;
    uint32_t fqQuantum = 0;
    uint32_t fqDropBatch = 64;
    // RED (no Linux defaults: tc requires them; these are validation/ns3/qdisc.py's)
    double redMinTh = 17;
    double redMaxTh = 50;
    double redMaxP = 0.1;
    double redQW = 0.001953125; // 2^-9: Linux keeps W as a power of two (Wlog)
    bool redGentle = false;     // Linux sch_red has no gentle mode
    bool redWait = false;       // Linux: uniform inter-mark spacing (p / (1 - count p))
    bool redHardDrop = false;   // Linux: without the harddrop flag ECT packets are marked
    uint32_t redMeanPktSize = 1500;
    // PIE (Linux sch_pie defaults)
    std::string pieTarget = "15ms";
    std::string pieTupdate = "15ms";
    double pieAlpha = 0.125;
    double pieBeta = 1.25;
    std::string pieMaxBurst = "150ms";
    bool pieDerandomize = true; // Linux always accumulates probability (accu_prob)
    bool pieDqRate = false;
    double pieMarkEcnTh = 0.1;
    bool pieCapDrop = true;

    CommandLine cmd(__FILE__);
    cmd.AddValue("qdisc", "fifo|red|codel|fq_codel|pie", qdisc);
    cmd.AddValue("ecn", "queue disc UseEcn and TcpSocketBase::UseEcn=On", ecn);
    cmd.AddValue("cc", "every flow's congestion control: newreno|linuxreno|cubic|bbr|newreno-flightsize|dctcp", cc);
    cmd.AddValue("flows", "number of flows", nFlows);
    cmd.AddValue("starts", "comma-separated start time of each flow, seconds (default all 0)", startList);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("delay", "bottleneck one-way propagation delay", delay);
    cmd.AddValue("buffer", "queue disc hard limit (MaxSize), packets", buffer);
    cmd.AddValue("deviceQueue", "bottleneck device queue under the queue disc, packets", deviceQueue);
    cmd.AddValue("mss", "TCP payload bytes per segment", mss);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("seed", "RNG run number (RngSeedManager::SetRun)", seed);
    cmd.AddValue("accessRate", "rate of each sender's access link", accessRate);
    cmd.AddValue("accessDelay", "one-way delay of each sender's access link", accessDelay);
    cmd.AddValue("delAckCount", "ns3::TcpSocket::DelAckCount", delAckCount);
    cmd.AddValue("delAckTimeout", "ns3::TcpSocket::DelAckTimeout", delAckTimeout);
    cmd.AddValue("minRto", "ns3::TcpSocketBase::MinRto", minRto);
    cmd.AddValue("sockBuf", "TCP send and receive buffer, bytes", bufBytes);
    cmd.AddValue("recovery", "prr | classic | prr-sack (ccsim-tcp.h)", recovery);
    cmd.AddValue("rateSampler", "ns3 | linux (ccsim-tcp.h)", rateSampler);
    cmd.AddValue("clockGranularity", "ns3::TcpSocketBase::ClockGranularity", clockGranularity);
    cmd.AddValue("codelTarget", "CoDel / FQ-CoDel Target", codelTarget);
    cmd.AddValue("codelInterval", "CoDel / FQ-CoDel Interval", codelInterval);
    cmd.AddValue("codelMinBytes", "CoDel MinBytes (no drop while backlog < MinBytes)", codelMinBytes);
    cmd.AddValue("fqFlows", "FQ-CoDel Flows (hash buckets)", fqFlows);
    cmd.AddValue("fqQuantum", "FQ-CoDel quantum, bytes (0: the device MTU)", fqQuantum);
    cmd.AddValue("fqDropBatch", "FQ-CoDel DropBatchSize", fqDropBatch);
    cmd.AddValue("redMinTh", "RED MinTh, packets", redMinTh);
    cmd.AddValue("redMaxTh", "RED MaxTh, packets", redMaxTh);
    cmd.AddValue("redMaxP", "RED max_p (LInterm = 1 / max_p)", redMaxP);
    cmd.AddValue("redQW", "RED QW (EWMA weight; 1 = instantaneous queue)", redQW);
    cmd.AddValue("redGentle", "RED Gentle", redGentle);
    cmd.AddValue("redWait", "RED Wait (ns-2 style spacing)", redWait);
    cmd.AddValue("redHardDrop", "RED UseHardDrop (drop, not mark, above MaxTh)", redHardDrop);
    cmd.AddValue("redMeanPktSize", "RED MeanPktSize, bytes (Linux avpkt; idle-time decay)", redMeanPktSize);
    cmd.AddValue("pieTarget", "PIE QueueDelayReference", pieTarget);
    cmd.AddValue("pieTupdate", "PIE Tupdate", pieTupdate);
    cmd.AddValue("pieAlpha", "PIE A", pieAlpha);
    cmd.AddValue("pieBeta", "PIE B", pieBeta);
    cmd.AddValue("pieMaxBurst", "PIE MaxBurstAllowance", pieMaxBurst);
    cmd.AddValue("pieDerandomize", "PIE UseDerandomization", pieDerandomize);
    cmd.AddValue("pieDqRate", "PIE UseDequeueRateEstimator", pieDqRate);
    cmd.AddValue("pieMarkEcnTh", "PIE MarkEcnThreshold", pieMarkEcnTh);
    cmd.AddValue("pieCapDrop", "PIE UseCapDropAdjustment", pieCapDrop);
    cmd.Parse(argc, argv);

    auto fail = [](const std::string& msg) {
        std::cerr << "qdisc: " << msg << "\n";
        return 2;
    };
    const std::map<std::string, std::string> qdiscTypes = {
        {"fifo", "ns3::FifoQueueDisc"},
        {"red", "ns3::RedQueueDisc"},
        {"codel", "ns3::CoDelQueueDisc"},
        {"fq_codel", "ns3::FqCoDelQueueDisc"},
        {"pie", "ns3::PieQueueDisc"},
    };
    if (qdisc == "dualpi2")
    {
        return fail("ns-3 3.44 has no DualPI2 queue disc");
    }
    if (!qdiscTypes.count(qdisc))
    {
        return fail("--qdisc must be fifo, red, codel, fq_codel or pie");
    }
    const std::string ccType = cc == "dctcp" ? "ns3::TcpDctcp" : CcTypeName(cc);
    if (ccType.empty())
    {
        return fail("unknown congestion control '" + cc + "'");
    }
    if (cc == "dctcp" && !ecn)
    {
        return fail("--cc=dctcp needs --ecn=1");
    }
    if (nFlows < 1 || deviceQueue < 1 || buffer < 1)
    {
        return fail("--flows, --deviceQueue and --buffer must be >= 1");
    }
    if (recovery != "prr" && recovery != "classic" && recovery != "prr-sack")
    {
        return fail("--recovery must be prr, classic or prr-sack");
    }
    if (rateSampler != "ns3" && rateSampler != "linux")
    {
        return fail("--rateSampler must be ns3 or linux");
    }
    std::vector<double> starts(nFlows, 0.0);
    if (!startList.empty())
    {
        const std::vector<std::string> s = SplitCommaList(startList);
        if (s.size() != nFlows)
        {
            return fail("--starts needs one value per flow");
        }
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            starts[i] = std::stod(s[i]);
            if (starts[i] < 0 || starts[i] >= duration)
            {
                return fail("--starts values must be in [0, duration)");
            }
        }
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // ---- TCP (ccsim-tcp.h) and ECN ----
    SetCcsimTcpDefaults(mss, bufBytes, delAckCount, delAckTimeout, minRto, clockGranularity, recovery);
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(ecn ? "On" : "Off"));

    // ---- queue-disc parameters (as defaults: FQ-CoDel's per-flow CoDel queues take them too)
    const QueueSizeValue limit(QueueSize(QueueSizeUnit::PACKETS, buffer));
    Config::SetDefault("ns3::CoDelQueueDisc::Target", StringValue(codelTarget));
    Config::SetDefault("ns3::CoDelQueueDisc::Interval", StringValue(codelInterval));
    Config::SetDefault("ns3::CoDelQueueDisc::MinBytes", UintegerValue(codelMinBytes));
    Config::SetDefault("ns3::CoDelQueueDisc::UseEcn", BooleanValue(ecn));
    Config::SetDefault("ns3::CoDelQueueDisc::MaxSize", limit);

    TrafficControlHelper tch;
    const std::string tid = qdiscTypes.at(qdisc);
    if (qdisc == "fifo")
    {
        tch.SetRootQueueDisc(tid, "MaxSize", limit);
    }
    else if (qdisc == "codel")
    {
        tch.SetRootQueueDisc(tid, "MaxSize", limit);
    }
    else if (qdisc == "fq_codel")
    {
        tch.SetRootQueueDisc(tid,
                             "MaxSize", limit,
                             "Target", StringValue(codelTarget),
                             "Interval", StringValue(codelInterval),
                             "UseEcn", BooleanValue(ecn),
                             "Flows", UintegerValue(fqFlows),
                             "DropBatchSize", UintegerValue(fqDropBatch));
    }
    else if (qdisc == "red")
    {
        tch.SetRootQueueDisc(tid,
                             "MaxSize", limit,
                             "MinTh", DoubleValue(redMinTh),
                             "MaxTh", DoubleValue(redMaxTh),
                             "LInterm", DoubleValue(1.0 / redMaxP),
                             "QW", DoubleValue(redQW),
                             "Gentle", BooleanValue(redGentle),
                             "Wait", BooleanValue(redWait),
                             "UseHardDrop", BooleanValue(redHardDrop),
                             "UseEcn", BooleanValue(ecn),
                             "MeanPktSize", UintegerValue(redMeanPktSize),
                             "LinkBandwidth", StringValue(rate),
                             "LinkDelay", StringValue(delay));
    }
    else // pie
    {
        tch.SetRootQueueDisc(tid,
                             "MaxSize", limit,
                             "QueueDelayReference", StringValue(pieTarget),
                             "Tupdate", StringValue(pieTupdate),
                             "A", DoubleValue(pieAlpha),
                             "B", DoubleValue(pieBeta),
                             "MaxBurstAllowance", StringValue(pieMaxBurst),
                             "UseDerandomization", BooleanValue(pieDerandomize),
                             "UseDequeueRateEstimator", BooleanValue(pieDqRate),
                             "MarkEcnThreshold", DoubleValue(pieMarkEcnTh),
                             "UseCapDropAdjustment", BooleanValue(pieCapDrop),
                             "UseEcn", BooleanValue(ecn),
                             "MeanPktSize", UintegerValue(mss + 52));
    }

    // ---- topology ----
    NodeContainer senders;
    senders.Create(nFlows);
    Ptr<Node> router = CreateObject<Node>();
    Ptr<Node> receiver = CreateObject<Node>();
    const std::string bigQueue = "100000p"; // never the binding constraint

    PointToPointHelper access = P2pLinkHelper(accessRate, accessDelay, QueueSize(bigQueue), false);
    // flow control stays on at the bottleneck: the queue disc sits above its device queue
    PointToPointHelper bottleneck =
        P2pLinkHelper(rate, delay, QueueSize(QueueSizeUnit::PACKETS, deviceQueue), true);

    std::vector<NetDeviceContainer> accessDevs;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        accessDevs.push_back(access.Install(senders.Get(i), router));
    }
    NetDeviceContainer btlDevs = bottleneck.Install(router, receiver);
    Ptr<PointToPointNetDevice> btlDev = DynamicCast<PointToPointNetDevice>(btlDevs.Get(0));
    Ptr<PointToPointNetDevice> ackDev = DynamicCast<PointToPointNetDevice>(btlDevs.Get(1));
    ackDev->GetQueue()->SetMaxSize(QueueSize(bigQueue)); // ACK direction: never drops

    InternetStackHelper stack;
    stack.InstallAll();
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        senders.Get(i)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType",
                                                                 TypeIdValue(TypeId::LookupByName(ccType)));
    }
    if (cc == "dctcp")
    {
        receiver->GetObject<TcpL4Protocol>()->SetAttribute("SocketType",
                                                           TypeIdValue(TypeId::LookupByName(ccType)));
    }

    // the queue disc first: Ipv4AddressHelper then leaves this device alone
    QueueDiscContainer qdc = tch.Install(btlDev);
    Ptr<QueueDisc> qd = qdc.Get(0);
    if (qdisc == "fq_codel" && fqQuantum > 0)
    {
        DynamicCast<FqCoDelQueueDisc>(qd)->SetQuantum(fqQuantum);
    }

    Ipv4AddressHelper addr;
    CeCounter ceCount;
    ceCount.ce.assign(nFlows, 0);
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        std::ostringstream net;
        net << "10.1." << i + 1 << ".0";
        addr.SetBase(net.str().c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ifs = addr.Assign(accessDevs[i]);
        ceCount.flowOf[ifs.GetAddress(0).Get()] = i;
    }
    addr.SetBase("10.2.1.0", "255.255.255.0");
    Ipv4InterfaceContainer btlIfs = addr.Assign(btlDevs);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Only our queue disc: remove the default FqCoDel Ipv4AddressHelper put on the
    // receiver's bottleneck device (the ACK direction), check there is no other.
    UninstallQueueDiscsExcept(btlDev);
    NS_ABORT_MSG_UNLESS(router->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(btlDev) == qd,
                        "the bottleneck queue disc is not installed");

    // ---- applications ----
    const Ipv4Address dst = btlIfs.GetAddress(1);
    std::vector<Ptr<PacketSink>> sinks;
    std::vector<FlowTracer> tracers(nFlows);
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        const uint16_t port = 5000 + i;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(receiver);
        sinkApp.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));

        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(dst, port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer srcApp = src.Install(senders.Get(i));
        srcApp.Start(Seconds(starts[i]));
        srcApp.Stop(Seconds(duration));
        // the socket exists once StartApplication ran; only the SYN has been sent 1 ns later
        Simulator::Schedule(Seconds(starts[i]) + NanoSeconds(1),
                            &ConnectFlowTracer,
                            DynamicCast<BulkSendApplication>(srcApp.Get(0)),
                            &tracers[i],
                            rateSampler == "linux");
    }

    // ---- bottleneck measurements ----
    DelaySamples sojourn;
    PacketWait wait;
    QueueAvg qdAvg;
    qd->TraceConnectWithoutContext("SojournTime", MakeCallback(&DelaySamples::OnSojourn, &sojourn));
    qd->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&QueueAvg::OnChange, &qdAvg));
    qd->TraceConnectWithoutContext("Enqueue", MakeCallback(&PacketWait::OnQdiscEnqueue, &wait));
    qd->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&PacketWait::OnQdiscDrop, &wait));
    Ptr<Queue<Packet>> devQ = btlDev->GetQueue();
    devQ->TraceConnectWithoutContext("Dequeue", MakeCallback(&PacketWait::OnDeviceDequeue, &wait));
    devQ->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&QueueAvg::OnChange, &wait.deviceAvg));
    receiver->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext("Rx", MakeCallback(&CeCounter::OnRx, &ceCount));

    Simulator::Stop(Seconds(duration));
    auto tRun0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto tRun1 = std::chrono::steady_clock::now();
    const double wall = std::chrono::duration<double>(tRun1 - tRun0).count();
    const double setupWall = std::chrono::duration<double>(tRun0 - tSetup0).count();
    const double simSeconds = Simulator::Now().GetSeconds();

    // ---- results ----
    const QueueDisc::Stats& st = qd->GetStats();
    uint64_t limitDrops = 0;
    uint64_t aqmDrops = 0;
    std::map<std::string, uint64_t> dropReasons;
    for (const auto* m : {&st.nDroppedPacketsBeforeEnqueue, &st.nDroppedPacketsAfterDequeue})
    {
        for (const auto& [reason, n] : *m)
        {
            dropReasons[reason] += n;
            (IsLimitDrop(qdisc, reason) ? limitDrops : aqmDrops) += n;
        }
    }
    const uint64_t btlTxPkts = devQ->GetTotalReceivedPackets() - devQ->GetNPackets();
    const uint64_t btlTxBytes = devQ->GetTotalReceivedBytes() - devQ->GetNBytes();
    const uint64_t otherDrops = DeviceQueueDropsExcept(btlDev);
    const double rateBps = DataRate(rate).GetBitRate();

    std::ostringstream js;
    js << std::setprecision(10);
    js << "{\"simulator\":\"ns-3\",\"ns3_version\":\"" << NS3_LIB_VERSION << "\"";
    js << ",\"config\":{\"qdisc\":" << JsonString(qdisc) << ",\"ecn\":" << (ecn ? "true" : "false")
       << ",\"cc\":" << JsonString(cc) << ",\"flows\":" << nFlows << ",\"rate\":" << JsonString(rate)
       << ",\"delay\":" << JsonString(delay) << ",\"buffer_pkts\":" << buffer
       << ",\"device_queue_pkts\":" << deviceQueue << ",\"mss\":" << mss << ",\"duration\":" << duration
       << ",\"seed\":" << seed << ",\"recovery\":" << JsonString(recovery)
       << ",\"rate_sampler\":" << JsonString(rateSampler)
       << ",\"clock_granularity\":" << JsonString(clockGranularity) << "}";

    double sumX = 0.0;
    double sumX2 = 0.0;
    js << ",\"flows\":[";
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        const FlowTracer& t = tracers[i];
        const uint64_t rx = sinks[i]->GetTotalRx();
        const double thr = t.BytesAcked() * 8.0 / (duration - starts[i]) / 1e6;
        sumX += thr;
        sumX2 += thr * thr;
        js << (i ? "," : "") << "{\"id\":" << i << ",\"cc\":" << JsonString(cc)
           << ",\"start_s\":" << starts[i] << ",\"throughput_mbps\":" << thr
           << ",\"sink_throughput_mbps\":" << rx * 8.0 / duration / 1e6 << ",\"bytes_received\":" << rx
           << ",\"bytes_acked\":" << t.BytesAcked() << ",\"segments_sent\":" << t.segmentsSent
           << ",\"retransmits\":" << t.retransmits << ",\"fast_recoveries\":" << t.fastRecoveries
           << ",\"rto_count\":" << t.rtoCount << ",\"ce_received\":" << ceCount.ce[i]
           << ",\"ece_reductions\":" << t.cwrEntries << ",\"rtt_samples\":" << t.rttN
           << ",\"rtt_mean_ms\":" << Num(t.rttN ? t.rttSum / t.rttN * 1e3 : std::nan(""))
           << ",\"rtt_min_ms\":" << Num(t.rttN ? t.rttMin * 1e3 : std::nan("")) << "}";
    }
    js << "],\"total_throughput_mbps\":" << sumX
       << ",\"jain_index\":" << (sumX2 > 0 ? sumX * sumX / (nFlows * sumX2) : 0.0);
    js << ",\"bottleneck\":{\"utilization\":" << btlTxBytes * 8.0 / (rateBps * duration)
       << ",\"packets_in\":" << st.nTotalReceivedPackets << ",\"tx_packets\":" << btlTxPkts
       << ",\"drops\":" << limitDrops << ",\"aqm_drops\":" << aqmDrops
       << ",\"marks\":" << st.nTotalMarkedPackets << ",\"drop_reasons\":" << JsonCounts(dropReasons)
       << ",\"mark_reasons\":" << JsonCounts(st.nMarkedPackets)
       << ",\"qdelay_mean_ms\":" << Num(sojourn.MeanMs())
       << ",\"qdelay_p95_ms\":" << Num(sojourn.QuantileMs(0.95))
       << ",\"qdelay_total_mean_ms\":" << Num(wait.total.MeanMs())
       << ",\"qdelay_total_p95_ms\":" << Num(wait.total.QuantileMs(0.95))
       << ",\"queue_mean_pkts\":" << qdAvg.Mean(simSeconds)
       << ",\"device_queue_mean_pkts\":" << wait.deviceAvg.Mean(simSeconds)
       << ",\"device_drops\":" << devQ->GetTotalDroppedPackets() << ",\"other_queue_drops\":" << otherDrops
       << ",\"buffer_pkts\":" << buffer;
    if (auto fq = DynamicCast<FqCoDelQueueDisc>(qd))
    {
        js << ",\"fq_flow_queues\":" << fq->GetNQueueDiscClasses() << ",\"fq_quantum\":" << fq->GetQuantum();
        if (fq->GetNQueueDiscClasses() > 0)
        {
            js << ",\"fq_child_attributes\":" << AttributesJson(fq->GetQueueDiscClass(0)->GetQueueDisc());
        }
    }
    js << ",\"qdisc_type\":" << JsonString(qd->GetInstanceTypeId().GetName())
       << ",\"qdisc_attributes\":" << AttributesJson(qd) << "}";
    js << ",\"events\":" << Simulator::GetEventCount() << ",\"sim_seconds\":" << simSeconds
       << ",\"wall_seconds\":" << wall << ",\"setup_seconds\":" << setupWall
       << ",\"peak_rss_mb\":" << PeakRssMb() << "}";

    Simulator::Destroy();
    std::cout << js.str() << std::endl;
    return 0;
}
