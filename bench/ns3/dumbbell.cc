// ns-3 reference for the ccsim speed benchmark (bench/bench.py).
//
// Dumbbell:   sender_i --(access link, 1 Gbps / 0 ms)--> router --(bottleneck)--> receiver
//
//  * one sender node per flow, each with its own access link and its own
//    congestion control (per-node ns3::TcpL4Protocol::SocketType);
//  * the only buffer that can overflow is the router's bottleneck egress
//    device queue: a DropTailQueue<Packet> limited to --buffer packets.
//    Flow control is disabled on every PointToPoint device, so no
//    traffic-control queue disc is installed anywhere (Ipv4AddressHelper only
//    installs the default FqCoDel root qdisc on devices that carry a
//    NetDeviceQueueInterface); the program asserts this before running.
//    Every other device queue (access links, the receiver's ACK direction)
//    is made large enough never to drop.
//  * TCP: SACK on, timestamps on, window scaling on, delayed ACK count 2
//    (ns-3 default; DelAckTimeout 200 ms default), MinRto 200 ms, initial
//    cwnd 10 segments, PRR recovery (ns-3 default), 4 MiB send/receive
//    buffers.  4 MiB never limits the window here: throughput and event
//    counts are bit-identical for 2..64 MiB; a larger send buffer only adds
//    resident memory because BulkSend keeps it full.  Pacing is off globally;
//    TcpBbr switches pacing on for its own socket (tcp-bbr.cc:
//    InitPacingRate sets tcb->m_pacing = true).
//  * one BulkSend application per flow (unlimited bytes, writes of one MSS)
//    and one PacketSink per flow on the receiver (own port) so per-flow
//    goodput is the sink's received byte count / duration.
//
// By default no logging, pcap, ascii traces, FlowMonitor or trace callbacks
// are installed: all statistics come from counters the objects keep anyway
// (PacketSink::GetTotalRx, Queue counters, Simulator::GetEventCount), so the
// speed benchmark (bench/bench.py) measures ns-3 itself.
//
// --flowStats=1 (used by validation/ns3/run.py, not by the benchmark) connects
// each sender socket's Tx, Rx, CongState and RTT trace sources and adds, per
// flow: rtt_mean_ms / rtt_min_ms / rtt_samples (see FlowTracer: the same
// per-ACK sample ccsim's rtt_mean_ms averages), srtt_mean_ms (mean of ns-3's
// own RttMeanDeviation estimate over its updates), bytes_acked and
// acked_throughput_mbps, segments_sent, retransmits, fast_recoveries,
// rto_count; and for the bottleneck the time-averaged queue length.
// --traceFile=F (with --flowStats) also writes a CSV time series and
// #event/#retx/#drop lines for investigations.
//
// Options for the cross-validation (docs/validation.md), all off by default:
//   --delAckTimeout      ns3::TcpSocket::DelAckTimeout (ccsim and Linux: 40ms)
//   --bufferBdp=X        buffer of X BDP, converted to packets exactly as ccsim does
//   --clockGranularity   ns3::TcpSocketBase::ClockGranularity (RTO floor above SRTT)
//   --recovery=prr-sack  PRR without ns-3 3.44's extra segment per duplicate ACK
//   --rateSampler=linux  delivery-rate samples with Linux tcp_rate.c semantics
//   --cc=newreno-flightsize  TcpNewReno with ssthresh = FlightSize / 2
// The last three are experiments that switch one ns-3 3.44 behaviour to what
// Linux does; each class (in ccsim-tcp.h, shared with validation/ns3/parking_lot.cc)
// says what and why.
//
// Output: exactly one JSON line on stdout.
//
// Build: bash bench/ns3/build.sh   (compiles against the PyPI ns3 wheel)

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/ppp-header.h"
#include "ns3/traffic-control-module.h"

#include "ccsim-tcp.h" // FlowTracer, PrrSackRecovery, LinuxRateSampler, ... (shared with parking_lot.cc)

// bench/ns3/dumbbell_many.cc compiles this file with DUMBBELL_MANY defined: sender i's access
// link then gets the /30 subnet 10.128.0.0 + 4 i (up to 2,097,152 flows) instead of
// 10.1.(i + 1).0/24 (at most 254), and the output adds run_cpu_seconds. Nothing else differs.
#ifdef DUMBBELL_MANY
#define PROG "dumbbell_many"
#include <time.h> // clock_gettime(CLOCK_PROCESS_CPUTIME_ID)
#else
#define PROG "dumbbell"
#endif

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <fstream>
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

// --traceFile: one #drop line per packet the bottleneck queue drops.
void
LogDrop(std::ofstream* out, Ptr<const Packet> p)
{
    Ptr<Packet> c = p->Copy();
    PppHeader ppp;
    Ipv4Header ip;
    TcpHeader tcp;
    c->RemoveHeader(ppp);
    c->RemoveHeader(ip);
    c->RemoveHeader(tcp);
    *out << "#drop," << Simulator::Now().GetSeconds() << "," << ip.GetSource() << ","
         << tcp.GetSequenceNumber().GetValue() << "," << c->GetSize() << "\n";
}

// --traceFile: one CSV row per flow every --traceInterval.
void
SampleTrace(std::ofstream* out,
            std::vector<FlowTracer>* tracers,
            Ptr<Queue<Packet>> q,
            uint32_t mss,
            Time interval)
{
    const double t = Simulator::Now().GetSeconds();
    for (const FlowTracer& tr : *tracers)
    {
        *out << t << "," << tr.id << "," << tr.cwnd / double(mss) << "," << tr.ssthresh / double(mss)
             << "," << tr.inflight / double(mss) << "," << tr.pacingBps / 1e6 << "," << tr.srtt * 1e3
             << "," << TcpSocketState::TcpCongStateName[tr.congState] << "," << tr.BytesAcked()
             << "," << tr.retransmits << "," << tr.segmentsSent << "," << q->GetNPackets() << "\n";
    }
    Simulator::Schedule(interval, &SampleTrace, out, tracers, q, mss, interval);
}

} // namespace

int
main(int argc, char* argv[])
{
    auto tSetup0 = std::chrono::steady_clock::now();

    std::string ccList = "newreno,newreno";
    std::string rate = "10Mbps";
    std::string delay = "20ms";
    uint32_t buffer = 50;
    uint32_t mss = 1000;
    double duration = 100.0;
    uint64_t seed = 1;
    std::string accessRate = "1Gbps";
    std::string accessDelay = "0ms";
    double loss = 0.0;
    uint32_t delAckCount = 2;
    std::string minRto = "200ms";
    uint32_t bufBytes = 4u << 20; // > max cwnd in both scenarios (results identical for 2..64 MiB)
    std::string delAckTimeout = "200ms"; // ns-3 default; Linux and ccsim use 40 ms
    double bufferBdp = 0.0;
    bool flowStats = false;
    std::string traceFile;
    std::string traceInterval = "10ms";
    std::string rateSampler = "ns3";
    std::string recovery = "prr";
    std::string clockGranularity = "1ms";

    CommandLine cmd(__FILE__);
    cmd.AddValue("cc", "comma-separated congestion control per flow: newreno|cubic|bbr|linuxreno|newreno-flightsize", ccList);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("delay", "bottleneck one-way propagation delay", delay);
    cmd.AddValue("buffer", "bottleneck drop-tail buffer in packets", buffer);
    cmd.AddValue("mss", "TCP payload bytes per segment (ns3::TcpSocket::SegmentSize)", mss);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("seed", "RNG run number (RngSeedManager::SetRun)", seed);
    cmd.AddValue("accessRate", "rate of each sender's access link", accessRate);
    cmd.AddValue("accessDelay", "one-way delay of each sender's access link", accessDelay);
    cmd.AddValue("loss", "random packet loss rate on the bottleneck (receiver side)", loss);
    cmd.AddValue("delAckCount", "ns3::TcpSocket::DelAckCount", delAckCount);
    cmd.AddValue("minRto", "ns3::TcpSocketBase::MinRto", minRto);
    cmd.AddValue("sockBuf", "TCP send and receive buffer, bytes", bufBytes);
    cmd.AddValue("delAckTimeout", "ns3::TcpSocket::DelAckTimeout (ns-3 default 200ms)", delAckTimeout);
    cmd.AddValue("bufferBdp",
                 "if > 0: buffer in BDPs, converted as ccsim does (overrides --buffer): "
                 "max(1, round(x * rate * 2 * (delay + accessDelay) / 8 / (mss + 52))) packets",
                 bufferBdp);
    cmd.AddValue("flowStats",
                 "connect per-flow trace sources: mean RTT, retransmissions, recoveries, "
                 "bytes acked, mean queue (off for speed benchmarks)",
                 flowStats);
    cmd.AddValue("traceFile",
                 "with --flowStats: write a CSV time series (per flow cwnd, ssthresh, inflight "
                 "in segments, pacing Mbps, srtt ms, state, bytes acked, retransmits, new "
                 "segments sent, queue packets), #event lines for congestion-state changes, "
                 "#retx lines for retransmissions and #drop lines for bottleneck drops",
                 traceFile);
    cmd.AddValue("traceInterval", "sampling interval of --traceFile", traceInterval);
    cmd.AddValue("rateSampler",
                 "ns3 (stock TcpRateLinux) | linux (experiment: Linux tcp_rate.c sample "
                 "semantics, see LinuxRateSampler; needs --flowStats=1)",
                 rateSampler);
    cmd.AddValue("recovery",
                 "prr (ns-3 default TcpPrrRecovery) | classic (TcpClassicRecovery) | prr-sack "
                 "(experiment: PRR without ns-3 3.44's extra segment per duplicate ACK, see "
                 "PrrSackRecovery)",
                 recovery);
    cmd.AddValue("clockGranularity",
                 "ns3::TcpSocketBase::ClockGranularity G: RTO = max(SRTT + max(G, 4 RTTVAR), "
                 "MinRto) (ns-3 default 1ms; 200ms approximates Linux's SRTT + max(RTTVAR, 200 ms))",
                 clockGranularity);
    cmd.Parse(argc, argv);

    std::vector<std::string> ccs = SplitCommaList(ccList);
    if (ccs.empty())
    {
        std::cerr << PROG ": --cc needs at least one flow\n";
        return 2;
    }
    for (const auto& cc : ccs)
    {
        if (CcTypeName(cc).empty())
        {
            std::cerr << PROG ": unknown congestion control '" << cc
                      << "' (newreno|cubic|bbr|linuxreno|newreno-flightsize)\n";
            return 2;
        }
    }
    const uint32_t nFlows = ccs.size();
#ifdef DUMBBELL_MANY
    if (nFlows > (1u << 21))
    {
        std::cerr << PROG ": at most 2097152 flows (10.128.0.0/9 in /30 subnets)\n";
        return 2;
    }
#endif
    if (rateSampler != "ns3" && rateSampler != "linux")
    {
        std::cerr << PROG ": --rateSampler must be ns3 or linux\n";
        return 2;
    }
    if (recovery != "prr" && recovery != "classic" && recovery != "prr-sack")
    {
        std::cerr << PROG ": --recovery must be prr, classic or prr-sack\n";
        return 2;
    }
    if (rateSampler == "linux" && !flowStats)
    {
        std::cerr << PROG ": --rateSampler=linux needs --flowStats=1\n";
        return 2;
    }

    if (bufferBdp > 0.0)
    {
        // ccsim scenario.rs: bdp_bytes = rate_bps * rtt_ns / 8 / 1e9, rtt = 2 x (delay +
        // access delay); packets = max(1, round(k * bdp_bytes / (mss + 52)))
        const double rttNs =
            2.0 * (Time(delay).GetNanoSeconds() + Time(accessDelay).GetNanoSeconds());
        const double bdpBytes = DataRate(rate).GetBitRate() * rttNs / 8.0 / 1e9;
        buffer = static_cast<uint32_t>(std::max(1.0, std::round(bufferBdp * bdpBytes / (mss + 52))));
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // ---- TCP defaults (ccsim-tcp.h) ----
    SetCcsimTcpDefaults(mss, bufBytes, delAckCount, delAckTimeout, minRto, clockGranularity, recovery);

    // ---- topology ----
    NodeContainer senders;
    senders.Create(nFlows);
    Ptr<Node> router = CreateObject<Node>();
    Ptr<Node> receiver = CreateObject<Node>();

    const std::string bigQueue = "100000p"; // never the binding constraint

    PointToPointHelper access = P2pLinkHelper(accessRate, accessDelay, QueueSize(bigQueue), false);
    PointToPointHelper bottleneck =
        P2pLinkHelper(rate, delay, QueueSize(QueueSizeUnit::PACKETS, buffer), false);

    std::vector<NetDeviceContainer> accessDevs;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        accessDevs.push_back(access.Install(senders.Get(i), router));
    }
    NetDeviceContainer btlDevs = bottleneck.Install(router, receiver);
    Ptr<PointToPointNetDevice> btlDev = DynamicCast<PointToPointNetDevice>(btlDevs.Get(0));
    Ptr<PointToPointNetDevice> ackDev = DynamicCast<PointToPointNetDevice>(btlDevs.Get(1));
    ackDev->GetQueue()->SetMaxSize(QueueSize(bigQueue)); // ACK direction: never drops

    if (loss > 0.0)
    {
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
        em->SetAttribute("ErrorRate", DoubleValue(loss));
        ackDev->SetAttribute("ReceiveErrorModel", PointerValue(em));
    }

    InternetStackHelper stack;
    stack.InstallAll();

    // per-flow congestion control: TcpL4Protocol::SocketType on each sender node
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        senders.Get(i)->GetObject<TcpL4Protocol>()->SetAttribute(
            "SocketType",
            TypeIdValue(TypeId::LookupByName(CcTypeName(ccs[i]))));
    }

    Ipv4AddressHelper addr;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
#ifdef DUMBBELL_MANY
        addr.SetBase(Ipv4Address(Ipv4Address("10.128.0.0").Get() + 4 * i), "255.255.255.252");
#else
        std::ostringstream net;
        net << "10.1." << i + 1 << ".0";
        addr.SetBase(net.str().c_str(), "255.255.255.0");
#endif
        addr.Assign(accessDevs[i]);
    }
    addr.SetBase("10.2.1.0", "255.255.255.0");
    Ipv4InterfaceContainer btlIfs = addr.Assign(btlDevs);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // No queue disc anywhere: the device queues are the only buffers.
    UninstallQueueDiscsExcept(nullptr);

    // ---- applications ----
    const Ipv4Address dst = btlIfs.GetAddress(1);
    std::vector<Ptr<PacketSink>> sinks;
    std::vector<FlowTracer> tracers(nFlows);
    QueueAvg qavg;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        const uint16_t port = 5000 + i;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(receiver);
        sinkApp.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));

        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(dst, port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer srcApp = src.Install(senders.Get(i));
        srcApp.Start(Seconds(0));
        srcApp.Stop(Seconds(duration));
        if (flowStats)
        {
            // The socket exists once StartApplication ran at t = 0; only the SYN
            // has been sent by 1 ns.
            Simulator::Schedule(NanoSeconds(1),
                                &ConnectFlowTracer,
                                DynamicCast<BulkSendApplication>(srcApp.Get(0)),
                                &tracers[i],
                                rateSampler == "linux");
        }
    }
    std::ofstream traceOut;
    if (flowStats)
    {
        btlDev->GetQueue()->TraceConnectWithoutContext("PacketsInQueue",
                                                       MakeCallback(&QueueAvg::OnChange, &qavg));
        if (!traceFile.empty())
        {
            traceOut.open(traceFile);
            NS_ABORT_MSG_IF(!traceOut, "cannot write " << traceFile);
            traceOut << "time_s,flow,cwnd_pkts,ssthresh_pkts,inflight_pkts,pacing_mbps,srtt_ms,"
                        "state,bytes_acked,retransmits,segments_sent,queue_pkts\n";
            for (uint32_t i = 0; i < nFlows; ++i)
            {
                tracers[i].id = i;
                tracers[i].events = &traceOut;
            }
            btlDev->GetQueue()->TraceConnectWithoutContext("Drop",
                                                           MakeBoundCallback(&LogDrop, &traceOut));
            Simulator::Schedule(Time(traceInterval),
                                &SampleTrace,
                                &traceOut,
                                &tracers,
                                btlDev->GetQueue(),
                                mss,
                                Time(traceInterval));
        }
    }

    Simulator::Stop(Seconds(duration));

#ifdef DUMBBELL_MANY
    timespec cpu0{};
    timespec cpu1{};
#endif
    auto tRun0 = std::chrono::steady_clock::now();
#ifdef DUMBBELL_MANY
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
#endif
    Simulator::Run();
#ifdef DUMBBELL_MANY
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
    const double runCpu = (cpu1.tv_sec - cpu0.tv_sec) + (cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9;
#endif
    auto tRun1 = std::chrono::steady_clock::now();

    const double wall = std::chrono::duration<double>(tRun1 - tRun0).count();
    const double setupWall = std::chrono::duration<double>(tRun0 - tSetup0).count();
    const uint64_t events = Simulator::GetEventCount();
    const double simSeconds = Simulator::Now().GetSeconds();

    Ptr<Queue<Packet>> q = btlDev->GetQueue();
    const uint64_t drops = q->GetTotalDroppedPackets();
    // Packets that started transmission on the bottleneck (accepted by the
    // queue minus those still queued at the end); bytes include the 2-byte
    // PPP header ns-3 adds.
    const uint64_t btlTxPkts = q->GetTotalReceivedPackets() - q->GetNPackets();
    const uint64_t btlTxBytes = q->GetTotalReceivedBytes() - q->GetNBytes();
    // Drops anywhere else (access links, ACK direction) - expected 0; reported
    // so a reader can check the bottleneck queue really is the only buffer.
    const uint64_t otherDrops = DeviceQueueDropsExcept(btlDev);
    const double rateBps = DataRate(rate).GetBitRate();
    const double utilization = btlTxBytes * 8.0 / (rateBps * duration);

    std::ostringstream js;
    js << std::setprecision(10);
    js << "{\"simulator\":\"ns-3\",\"ns3_version\":\"" << NS3_LIB_VERSION << "\"";
    js << ",\"config\":{\"cc\":[";
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        js << (i ? "," : "") << JsonString(ccs[i]);
    }
    js << "],\"rate\":" << JsonString(rate) << ",\"delay\":" << JsonString(delay)
       << ",\"buffer_pkts\":" << buffer << ",\"mss\":" << mss << ",\"duration\":" << duration
       << ",\"seed\":" << seed << ",\"loss\":" << loss << ",\"qdisc\":\"none\""
       << ",\"delack_count\":" << delAckCount << ",\"delack_timeout\":" << JsonString(delAckTimeout)
       << ",\"min_rto\":" << JsonString(minRto) << ",\"buffer_bdp\":" << bufferBdp
       << ",\"flow_stats\":" << (flowStats ? "true" : "false")
       << ",\"rate_sampler\":" << JsonString(rateSampler)
       << ",\"recovery\":" << JsonString(recovery)
       << ",\"clock_granularity\":" << JsonString(clockGranularity) << "}";

    double total = 0.0;
    double sumX = 0.0;
    double sumX2 = 0.0;
    uint64_t totalSegs = 0;
    js << ",\"flows\":[";
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        const uint64_t rx = sinks[i]->GetTotalRx();
        const double mbps = rx * 8.0 / duration / 1e6;
        const uint64_t segs = (rx + mss - 1) / mss;
        total += mbps;
        sumX += mbps;
        sumX2 += mbps * mbps;
        totalSegs += segs;
        js << (i ? "," : "") << "{\"id\":" << i << ",\"cc\":" << JsonString(ccs[i])
           << ",\"throughput_mbps\":" << mbps << ",\"bytes_received\":" << rx
           << ",\"segments_delivered\":" << segs;
        if (flowStats)
        {
            const FlowTracer& t = tracers[i];
            const double nan = std::nan("");
            js << ",\"bytes_acked\":" << t.BytesAcked()
               << ",\"acked_throughput_mbps\":" << t.BytesAcked() * 8.0 / duration / 1e6
               << ",\"segments_sent\":" << t.segmentsSent << ",\"retransmits\":" << t.retransmits
               << ",\"fast_recoveries\":" << t.fastRecoveries << ",\"rto_count\":" << t.rtoCount
               << ",\"rtt_samples\":" << t.rttN;
            const double rttMean = t.rttN ? t.rttSum / t.rttN * 1e3 : nan;
            const double rttMin = t.rttN ? t.rttMin * 1e3 : nan;
            const double srttMean = t.srttN ? t.srttSum / t.srttN * 1e3 : nan;
            js << ",\"rtt_mean_ms\":" << (std::isnan(rttMean) ? "null" : std::to_string(rttMean))
               << ",\"rtt_min_ms\":" << (std::isnan(rttMin) ? "null" : std::to_string(rttMin))
               << ",\"srtt_mean_ms\":" << (std::isnan(srttMean) ? "null" : std::to_string(srttMean));
        }
        js << "}";
    }
    js << "]";
    const double jain = sumX2 > 0 ? (sumX * sumX) / (nFlows * sumX2) : 0.0;
    js << ",\"total_throughput_mbps\":" << total << ",\"jain_index\":" << jain;
    js << ",\"bottleneck\":{\"drops\":" << drops << ",\"tx_packets\":" << btlTxPkts
       << ",\"utilization\":" << utilization << ",\"other_queue_drops\":" << otherDrops
       << ",\"buffer_pkts\":" << buffer;
    if (flowStats)
    {
        js << ",\"queue_mean_pkts\":" << qavg.Mean(simSeconds);
    }
    js << "}";
    js << ",\"segments_delivered\":" << totalSegs;
    js << ",\"events\":" << events;
    js << ",\"sim_seconds\":" << simSeconds;
    js << ",\"wall_seconds\":" << wall;
    js << ",\"setup_seconds\":" << setupWall;
    js << ",\"peak_rss_mb\":" << PeakRssMb();
#ifdef DUMBBELL_MANY
    js << ",\"run_cpu_seconds\":" << runCpu;
#endif
    js << "}";

    Simulator::Destroy();
    std::cout << js.str() << std::endl;
    return 0;
}
