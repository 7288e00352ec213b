// ns-3 reference for ccsim's parking-lot validation (validation/ns3/parking_lot.py).
//
// N bottlenecks in a chain (--bottlenecks, N >= 1; the validation uses 2 and 3):
//
//      a                 d1  c2                d2  c3               dN  b
//      |                   \ /                   \ /                  \ /
//      r0 ===== B1 ======== r1 ======= B2 ======= r2 ... ==== BN ===== rN
//      |
//      c1
//
//  * routers r0..rN; bottleneck i (1..N) is the point-to-point link r(i-1) - r(i):
//    --rate, --delay (one way), a drop-tail device queue of --buffer packets in each
//    direction (ns-3 point-to-point links are full duplex with the same rate, delay and
//    queue both ways; the r(i) -> r(i-1) direction carries the ACKs);
//  * flow 0, "long": host a behind r0 -> host b behind rN, across every bottleneck;
//    flow i (1..N), "cross i": host c<i> behind r(i-1) -> host d<i> behind r(i), across
//    bottleneck i only;
//  * every host has its own link to its router: --hostRate, --hostDelay, a drop-tail
//    device queue of --hostBuffer packets each way (large enough never to drop here: the
//    program reports the drops of every link direction, and parking_lot.py checks that only
//    the bottleneck directions drop);
//  * no traffic-control queue disc anywhere: flow control is disabled on every
//    PointToPoint device, so the device queues are the only buffers, exactly as in
//    bench/ns3/dumbbell.cc (the program asserts it before running). A device queue holds
//    the packets waiting; the one being serialised is outside it, as in ccsim.
//  * TCP as in dumbbell.cc and validation/ns3/run.py: SACK, timestamps, window scaling,
//    delayed ACK count 2 (--delAckTimeout, default 40 ms as ccsim and Linux), MinRto 200 ms,
//    initial cwnd 10, --mss payload bytes, 4 MiB socket buffers, pacing off. The ns-3 3.44
//    deviations from Linux of docs/validation.md can be switched off one by one with the
//    same options as dumbbell.cc: --recovery=prr-sack, --rateSampler=linux,
//    --clockGranularity=200ms, --cc=newreno-flightsize (classes in bench/ns3/ccsim-tcp.h).
//  * one BulkSend per flow (unlimited bytes, writes of one MSS) started at its --starts
//    time (it opens the connection then: SYN, SYN-ACK, ACK), one PacketSink per flow on
//    the destination host.
//
// Output: exactly one JSON line on stdout:
//   flows[]  per flow: name, src, dst, path, cc, start_s, throughput_mbps = bytes
//            cumulatively ACKed at the sender x 8 / (duration - start) (ccsim's
//            flows[].throughput_mbps: cumulatively ACKed payload / connection time),
//            bytes_acked, bytes_received (sink), rtt_mean_ms / rtt_min_ms (the Linux
//            ca_rtt_us sample ccsim averages, FlowTracer in ccsim-tcp.h), srtt_mean_ms,
//            segments_sent, retransmits, fast_recoveries, rto_count;
//   links[]  per link direction ("r0->r1", ...): rate_bps, delay, buffer_pkts, tx_packets,
//            tx_bytes (frames that started serialisation, PPP header included), drops
//            (drop-tail overflows), utilization = busy time / duration, where busy time =
//            tx_bytes x 8 / rate (the time the transmitter was serialising; ccsim's
//            links[].utilization is the same quantity), queue_mean_pkts, queue_max_pkts;
//            bottleneck: true for the N data directions r(i-1)->r(i);
//   bottlenecks  the ids of those N directions, in order;
//   other_queue_drops  drops on every direction that is not a bottleneck data direction
//            (expected 0).
//
// --traceFile=F writes a CSV time series (per flow cwnd, ssthresh, inflight, srtt, state,
// bytes acked, retransmits; per bottleneck the queue) every --traceInterval, plus #event
// and #retx lines, for investigations.
//
// Build: bash bench/ns3/build.sh   (builds dumbbell and this program against the PyPI ns3 wheel)

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "../../bench/ns3/ccsim-tcp.h" // FlowTracer, PrrSackRecovery, LinuxRateSampler, ...

#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#ifndef NS3_LIB_VERSION
#define NS3_LIB_VERSION "unknown" // set by build.sh from the library names
#endif

using namespace ns3;

namespace
{

// One direction of a point-to-point link: the transmitting device and its queue.
struct LinkDir
{
    std::string from;
    std::string to;
    Ptr<PointToPointNetDevice> dev;
    DataRate rate;
    std::string delay;
    uint32_t bufferPkts = 0;
    bool bottleneck = false;
    QueueAvg qavg;
    uint32_t qmax = 0;

    void OnQueue(uint32_t oldV, uint32_t newV)
    {
        qavg.OnChange(oldV, newV);
        qmax = std::max(qmax, newV);
    }
};

struct FlowDef
{
    std::string name;
    std::string cc;
    std::string src;
    std::string dst;
    std::vector<std::string> path;
    double start = 0.0;
};

std::string
JsonNumber(double x)
{
    if (std::isnan(x) || std::isinf(x))
    {
        return "null";
    }
    std::ostringstream o;
    o << std::setprecision(10) << x;
    return o.str();
}

std::string
JsonList(const std::vector<std::string>& xs)
{
    std::string out = "[";
    for (size_t i = 0; i < xs.size(); ++i)
    {
        out += (i ? "," : "") + JsonString(xs[i]);
    }
    return out + "]";
}

// --traceFile: one CSV row per flow and one per bottleneck every interval.
void
SampleTrace(std::ofstream* out,
            std::vector<FlowTracer>* tracers,
            std::vector<LinkDir>* links,
            uint32_t mss,
            Time interval)
{
    const double t = Simulator::Now().GetSeconds();
    for (const FlowTracer& tr : *tracers)
    {
        *out << t << ",flow" << tr.id << "," << tr.cwnd / double(mss) << ","
             << tr.ssthresh / double(mss) << "," << tr.inflight / double(mss) << ","
             << tr.srtt * 1e3 << "," << TcpSocketState::TcpCongStateName[tr.congState] << ","
             << tr.BytesAcked() << "," << tr.retransmits << ",\n";
    }
    for (const LinkDir& l : *links)
    {
        if (l.bottleneck)
        {
            *out << t << "," << l.from << "->" << l.to << ",,,,,,,,"
                 << l.dev->GetQueue()->GetNPackets() << "\n";
        }
    }
    Simulator::Schedule(interval, &SampleTrace, out, tracers, links, mss, interval);
}

} // namespace

int
main(int argc, char* argv[])
{
    auto tSetup0 = std::chrono::steady_clock::now();

    std::string ccList = "cubic";
    uint32_t nBtl = 2;
    std::string rate = "10Mbps";
    std::string delay = "10ms";
    uint32_t buffer = 50;
    uint32_t mss = 1448;
    double duration = 60.0;
    uint64_t seed = 1;
    std::string hostRate = "1Gbps";
    std::string hostDelay = "0ms";
    uint32_t hostBuffer = 1000;
    std::string startList;
    uint32_t delAckCount = 2;
    std::string delAckTimeout = "40ms";
    std::string minRto = "200ms";
    uint32_t bufBytes = 4u << 20;
    std::string rateSampler = "ns3";
    std::string recovery = "prr";
    std::string clockGranularity = "1ms";
    std::string traceFile;
    std::string traceInterval = "10ms";

    CommandLine cmd(__FILE__);
    cmd.AddValue("cc",
                 "congestion control: one name for every flow, or a comma-separated list, long "
                 "flow first then cross flows 1..N: newreno|cubic|bbr|linuxreno|newreno-flightsize",
                 ccList);
    cmd.AddValue("bottlenecks", "number of bottleneck links in the chain (N)", nBtl);
    cmd.AddValue("rate", "rate of each bottleneck link (both directions)", rate);
    cmd.AddValue("delay", "one-way propagation delay of each bottleneck link", delay);
    cmd.AddValue("buffer", "drop-tail device queue of each bottleneck direction, packets", buffer);
    cmd.AddValue("mss", "TCP payload bytes per segment (ns3::TcpSocket::SegmentSize)", mss);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("seed", "RNG run number (RngSeedManager::SetRun)", seed);
    cmd.AddValue("hostRate", "rate of each host's link to its router", hostRate);
    cmd.AddValue("hostDelay", "one-way delay of each host's link", hostDelay);
    cmd.AddValue("hostBuffer", "drop-tail device queue of each host link direction, packets", hostBuffer);
    cmd.AddValue("starts",
                 "comma-separated start times in seconds, long flow first then cross flows 1..N "
                 "(default: all 0)",
                 startList);
    cmd.AddValue("delAckCount", "ns3::TcpSocket::DelAckCount", delAckCount);
    cmd.AddValue("delAckTimeout", "ns3::TcpSocket::DelAckTimeout (ns-3's default is 200ms)", delAckTimeout);
    cmd.AddValue("minRto", "ns3::TcpSocketBase::MinRto", minRto);
    cmd.AddValue("sockBuf", "TCP send and receive buffer, bytes", bufBytes);
    cmd.AddValue("rateSampler", "ns3 (stock TcpRateLinux) | linux (LinuxRateSampler)", rateSampler);
    cmd.AddValue("recovery", "prr (ns-3 default) | classic | prr-sack (PrrSackRecovery)", recovery);
    cmd.AddValue("clockGranularity",
                 "ns3::TcpSocketBase::ClockGranularity (200ms approximates Linux's RTO floor)",
                 clockGranularity);
    cmd.AddValue("traceFile", "write a CSV time series and #event/#retx lines here", traceFile);
    cmd.AddValue("traceInterval", "sampling interval of --traceFile", traceInterval);
    cmd.Parse(argc, argv);

    if (nBtl < 1)
    {
        std::cerr << "parking_lot: --bottlenecks must be >= 1\n";
        return 2;
    }
    const uint32_t nFlows = nBtl + 1;
    std::vector<std::string> ccs = SplitCommaList(ccList);
    if (ccs.size() == 1)
    {
        ccs.assign(nFlows, ccs[0]);
    }
    if (ccs.size() != nFlows)
    {
        std::cerr << "parking_lot: --cc needs 1 or " << nFlows << " names (long flow, then cross flows)\n";
        return 2;
    }
    for (const auto& cc : ccs)
    {
        if (CcTypeName(cc).empty())
        {
            std::cerr << "parking_lot: unknown congestion control '" << cc
                      << "' (newreno|cubic|bbr|linuxreno|newreno-flightsize)\n";
            return 2;
        }
    }
    std::vector<double> starts(nFlows, 0.0);
    if (!startList.empty())
    {
        std::vector<std::string> s = SplitCommaList(startList);
        if (s.size() != nFlows)
        {
            std::cerr << "parking_lot: --starts needs " << nFlows << " values\n";
            return 2;
        }
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            starts[i] = std::stod(s[i]);
            if (starts[i] < 0 || starts[i] >= duration)
            {
                std::cerr << "parking_lot: --starts values must be in [0, duration)\n";
                return 2;
            }
        }
    }
    if (rateSampler != "ns3" && rateSampler != "linux")
    {
        std::cerr << "parking_lot: --rateSampler must be ns3 or linux\n";
        return 2;
    }
    if (recovery != "prr" && recovery != "classic" && recovery != "prr-sack")
    {
        std::cerr << "parking_lot: --recovery must be prr, classic or prr-sack\n";
        return 2;
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // ---- TCP defaults (ccsim-tcp.h) ----
    SetCcsimTcpDefaults(mss, bufBytes, delAckCount, delAckTimeout, minRto, clockGranularity, recovery);

    // ---- topology ----
    std::map<std::string, Ptr<Node>> nodes;
    auto node = [&nodes](const std::string& name) {
        auto it = nodes.find(name);
        if (it != nodes.end())
        {
            return it->second;
        }
        Ptr<Node> n = CreateObject<Node>();
        Names::Add(name, n);
        nodes[name] = n;
        return n;
    };
    auto R = [](uint32_t i) { return "r" + std::to_string(i); };

    std::vector<FlowDef> flows(nFlows);
    flows[0].name = "long";
    flows[0].src = "a";
    flows[0].dst = "b";
    flows[0].path.push_back("a");
    for (uint32_t i = 0; i <= nBtl; ++i)
    {
        flows[0].path.push_back(R(i));
    }
    flows[0].path.push_back("b");
    for (uint32_t i = 1; i <= nBtl; ++i)
    {
        FlowDef& f = flows[i];
        f.name = "cross" + std::to_string(i);
        f.src = "c" + std::to_string(i);
        f.dst = "d" + std::to_string(i);
        f.path = {f.src, R(i - 1), R(i), f.dst};
    }
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        flows[i].cc = ccs[i];
        flows[i].start = starts[i];
    }

    // Link list in the order ccsim's scenario lists them (parking_lot.py): bottlenecks
    // first, then each flow's source and destination host links.
    struct LinkSpec
    {
        std::string x, y;
        bool bottleneck;
    };
    std::vector<LinkSpec> specs;
    for (uint32_t i = 1; i <= nBtl; ++i)
    {
        specs.push_back({R(i - 1), R(i), true});
    }
    for (const FlowDef& f : flows)
    {
        specs.push_back({f.src, f.path[1], false});
        specs.push_back({f.path[f.path.size() - 2], f.dst, false});
    }
    for (const LinkSpec& s : specs)
    {
        node(s.x);
        node(s.y);
    }

    InternetStackHelper stack;
    stack.InstallAll();

    std::vector<LinkDir> links;
    links.reserve(2 * specs.size());
    Ipv4AddressHelper addr;
    uint32_t subnet = 0;
    for (const LinkSpec& s : specs)
    {
        PointToPointHelper p2p;
        const std::string r = s.bottleneck ? rate : hostRate;
        const std::string d = s.bottleneck ? delay : hostDelay;
        const uint32_t q = s.bottleneck ? buffer : hostBuffer;
        p2p.SetDeviceAttribute("DataRate", StringValue(r));
        p2p.SetChannelAttribute("Delay", StringValue(d));
        p2p.SetQueue("ns3::DropTailQueue<Packet>",
                     "MaxSize",
                     QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, q)));
        p2p.DisableFlowControl();
        NetDeviceContainer devs = p2p.Install(nodes[s.x], nodes[s.y]);
        ++subnet;
        std::ostringstream net;
        net << "10." << subnet / 256 + 1 << "." << subnet % 256 << ".0";
        addr.SetBase(net.str().c_str(), "255.255.255.0");
        addr.Assign(devs);
        for (int dir = 0; dir < 2; ++dir)
        {
            LinkDir l;
            l.from = dir == 0 ? s.x : s.y;
            l.to = dir == 0 ? s.y : s.x;
            l.dev = DynamicCast<PointToPointNetDevice>(devs.Get(dir));
            l.rate = DataRate(r);
            l.delay = d;
            l.bufferPkts = q;
            l.bottleneck = s.bottleneck && dir == 0;
            links.push_back(std::move(l));
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // No queue disc anywhere: the device queues are the only buffers (as dumbbell.cc).
    UninstallQueueDiscsExcept(nullptr);
    for (LinkDir& l : links)
    {
        l.dev->GetQueue()->TraceConnectWithoutContext("PacketsInQueue",
                                                      MakeCallback(&LinkDir::OnQueue, &l));
    }

    // per-flow congestion control: TcpL4Protocol::SocketType on each source host
    for (const FlowDef& f : flows)
    {
        nodes[f.src]->GetObject<TcpL4Protocol>()->SetAttribute(
            "SocketType",
            TypeIdValue(TypeId::LookupByName(CcTypeName(f.cc))));
    }

    // ---- applications ----
    std::vector<Ptr<PacketSink>> sinks;
    std::vector<FlowTracer> tracers(nFlows);
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        const FlowDef& f = flows[i];
        const uint16_t port = 5000 + i;
        const Ipv4Address dst = nodes[f.dst]->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal();
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(nodes[f.dst]);
        sinkApp.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));

        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(dst, port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer srcApp = src.Install(nodes[f.src]);
        srcApp.Start(Seconds(f.start));
        srcApp.Stop(Seconds(duration));
        tracers[i].id = i;
        // The socket exists once StartApplication ran; only the SYN has been sent 1 ns later.
        Simulator::Schedule(Seconds(f.start) + NanoSeconds(1),
                            &ConnectFlowTracer,
                            DynamicCast<BulkSendApplication>(srcApp.Get(0)),
                            &tracers[i],
                            rateSampler == "linux");
    }
    std::ofstream traceOut;
    if (!traceFile.empty())
    {
        traceOut.open(traceFile);
        NS_ABORT_MSG_IF(!traceOut, "cannot write " << traceFile);
        traceOut << "time_s,what,cwnd_pkts,ssthresh_pkts,inflight_pkts,srtt_ms,state,bytes_acked,"
                    "retransmits,queue_pkts\n";
        for (FlowTracer& t : tracers)
        {
            t.events = &traceOut;
        }
        Simulator::Schedule(Time(traceInterval),
                            &SampleTrace,
                            &traceOut,
                            &tracers,
                            &links,
                            mss,
                            Time(traceInterval));
    }

    Simulator::Stop(Seconds(duration));
    auto tRun0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto tRun1 = std::chrono::steady_clock::now();
    const double simSeconds = Simulator::Now().GetSeconds();

    // ---- output ----
    std::ostringstream js;
    js << std::setprecision(10);
    js << "{\"simulator\":\"ns-3\",\"program\":\"parking_lot\",\"ns3_version\":\"" << NS3_LIB_VERSION
       << "\"";
    js << ",\"config\":{\"bottlenecks\":" << nBtl << ",\"cc\":" << JsonList(ccs)
       << ",\"rate\":" << JsonString(rate) << ",\"delay\":" << JsonString(delay)
       << ",\"buffer_pkts\":" << buffer << ",\"host_rate\":" << JsonString(hostRate)
       << ",\"host_delay\":" << JsonString(hostDelay) << ",\"host_buffer_pkts\":" << hostBuffer
       << ",\"mss\":" << mss << ",\"duration\":" << duration << ",\"seed\":" << seed
       << ",\"delack_count\":" << delAckCount << ",\"delack_timeout\":" << JsonString(delAckTimeout)
       << ",\"min_rto\":" << JsonString(minRto) << ",\"rate_sampler\":" << JsonString(rateSampler)
       << ",\"recovery\":" << JsonString(recovery)
       << ",\"clock_granularity\":" << JsonString(clockGranularity) << ",\"qdisc\":\"none\"}";

    js << ",\"flows\":[";
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        const FlowDef& f = flows[i];
        const FlowTracer& t = tracers[i];
        const double conn = duration - f.start;
        js << (i ? "," : "") << "{\"id\":" << i << ",\"name\":" << JsonString(f.name)
           << ",\"cc\":" << JsonString(f.cc) << ",\"src\":" << JsonString(f.src)
           << ",\"dst\":" << JsonString(f.dst) << ",\"path\":" << JsonList(f.path)
           << ",\"start_s\":" << f.start
           << ",\"throughput_mbps\":" << t.BytesAcked() * 8.0 / conn / 1e6
           << ",\"bytes_acked\":" << t.BytesAcked() << ",\"bytes_received\":" << sinks[i]->GetTotalRx()
           << ",\"segments_sent\":" << t.segmentsSent << ",\"retransmits\":" << t.retransmits
           << ",\"fast_recoveries\":" << t.fastRecoveries << ",\"rto_count\":" << t.rtoCount
           << ",\"rtt_samples\":" << t.rttN
           << ",\"rtt_mean_ms\":" << JsonNumber(t.rttN ? t.rttSum / t.rttN * 1e3 : std::nan(""))
           << ",\"rtt_min_ms\":" << JsonNumber(t.rttN ? t.rttMin * 1e3 : std::nan(""))
           << ",\"srtt_mean_ms\":" << JsonNumber(t.srttN ? t.srttSum / t.srttN * 1e3 : std::nan(""))
           << "}";
    }
    js << "]";

    uint64_t otherDrops = 0;
    std::vector<std::string> btlIds;
    js << ",\"links\":[";
    for (size_t k = 0; k < links.size(); ++k)
    {
        LinkDir& l = links[k];
        Ptr<Queue<Packet>> q = l.dev->GetQueue();
        // Frames that started serialisation: accepted by the queue minus still queued.
        const uint64_t txPkts = q->GetTotalReceivedPackets() - q->GetNPackets();
        const uint64_t txBytes = q->GetTotalReceivedBytes() - q->GetNBytes();
        const double busy = txBytes * 8.0 / l.rate.GetBitRate();
        const uint64_t drops = q->GetTotalDroppedPackets();
        const std::string id = l.from + "->" + l.to;
        if (l.bottleneck)
        {
            btlIds.push_back(id);
        }
        else
        {
            otherDrops += drops;
        }
        js << (k ? "," : "") << "{\"id\":" << JsonString(id) << ",\"from\":" << JsonString(l.from)
           << ",\"to\":" << JsonString(l.to) << ",\"bottleneck\":" << (l.bottleneck ? "true" : "false")
           << ",\"rate_bps\":" << l.rate.GetBitRate() << ",\"delay\":" << JsonString(l.delay)
           << ",\"buffer_pkts\":" << l.bufferPkts << ",\"tx_packets\":" << txPkts
           << ",\"tx_bytes\":" << txBytes << ",\"drops\":" << drops
           << ",\"utilization\":" << busy / duration
           << ",\"queue_mean_pkts\":" << l.qavg.Mean(simSeconds) << ",\"queue_max_pkts\":" << l.qmax
           << "}";
    }
    js << "],\"bottlenecks\":" << JsonList(btlIds) << ",\"other_queue_drops\":" << otherDrops;
    js << ",\"events\":" << Simulator::GetEventCount() << ",\"sim_seconds\":" << simSeconds
       << ",\"wall_seconds\":" << std::chrono::duration<double>(tRun1 - tRun0).count()
       << ",\"setup_seconds\":" << std::chrono::duration<double>(tRun0 - tSetup0).count()
       << ",\"peak_rss_mb\":" << PeakRssMb() << "}";

    Simulator::Destroy();
    std::cout << js.str() << std::endl;
    return 0;
}
