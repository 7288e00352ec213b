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
// No logging, pcap, ascii traces, FlowMonitor or trace callbacks are
// installed: all statistics come from counters the objects keep anyway
// (PacketSink::GetTotalRx, Queue counters, Simulator::GetEventCount).
//
// Output: exactly one JSON line on stdout.
//
// Build: bash bench/ns3/build.sh   (compiles against the PyPI ns3 wheel)

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
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
    return "";
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

    CommandLine cmd(__FILE__);
    cmd.AddValue("cc", "comma-separated congestion control per flow: newreno|cubic|bbr", ccList);
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
    cmd.Parse(argc, argv);

    std::vector<std::string> ccs = SplitCommaList(ccList);
    if (ccs.empty())
    {
        std::cerr << "dumbbell: --cc needs at least one flow\n";
        return 2;
    }
    for (const auto& cc : ccs)
    {
        if (CcTypeName(cc).empty())
        {
            std::cerr << "dumbbell: unknown congestion control '" << cc
                      << "' (newreno|cubic|bbr|linuxreno)\n";
            return 2;
        }
    }
    const uint32_t nFlows = ccs.size();

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // ---- TCP defaults (attribute names checked against the 3.44 TypeIds) ----
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Time(minRto)));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(false));

    // ---- topology ----
    NodeContainer senders;
    senders.Create(nFlows);
    Ptr<Node> router = CreateObject<Node>();
    Ptr<Node> receiver = CreateObject<Node>();

    const std::string bigQueue = "100000p"; // never the binding constraint

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetChannelAttribute("Delay", StringValue(accessDelay));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue(bigQueue));
    access.DisableFlowControl();

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", StringValue(delay));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, buffer)));
    bottleneck.DisableFlowControl();

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
        std::ostringstream net;
        net << "10.1." << i + 1 << ".0";
        addr.SetBase(net.str().c_str(), "255.255.255.0");
        addr.Assign(accessDevs[i]);
    }
    addr.SetBase("10.2.1.0", "255.255.255.0");
    Ipv4InterfaceContainer btlIfs = addr.Assign(btlDevs);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // No queue disc anywhere: the device queues are the only buffers.
    NodeContainer all = NodeContainer::GetGlobal();
    for (uint32_t n = 0; n < all.GetN(); ++n)
    {
        Ptr<TrafficControlLayer> tc = all.Get(n)->GetObject<TrafficControlLayer>();
        for (uint32_t d = 0; d < all.Get(n)->GetNDevices(); ++d)
        {
            Ptr<NetDevice> dev = all.Get(n)->GetDevice(d);
            if (tc && tc->GetRootQueueDiscOnDevice(dev))
            {
                TrafficControlHelper().Uninstall(dev);
            }
            NS_ABORT_MSG_IF(tc && tc->GetRootQueueDiscOnDevice(dev), "queue disc still installed");
        }
    }

    // ---- applications ----
    const Ipv4Address dst = btlIfs.GetAddress(1);
    std::vector<Ptr<PacketSink>> sinks;
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
    }

    Simulator::Stop(Seconds(duration));

    auto tRun0 = std::chrono::steady_clock::now();
    Simulator::Run();
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
    uint64_t otherDrops = 0;
    for (uint32_t n = 0; n < all.GetN(); ++n)
    {
        for (uint32_t d = 0; d < all.Get(n)->GetNDevices(); ++d)
        {
            Ptr<PointToPointNetDevice> p2p =
                DynamicCast<PointToPointNetDevice>(all.Get(n)->GetDevice(d));
            if (p2p && p2p != btlDev)
            {
                otherDrops += p2p->GetQueue()->GetTotalDroppedPackets();
            }
        }
    }
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
       << ",\"seed\":" << seed << ",\"loss\":" << loss << ",\"qdisc\":\"none\"}";

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
           << ",\"segments_delivered\":" << segs << "}";
    }
    js << "]";
    const double jain = sumX2 > 0 ? (sumX * sumX) / (nFlows * sumX2) : 0.0;
    js << ",\"total_throughput_mbps\":" << total << ",\"jain_index\":" << jain;
    js << ",\"bottleneck\":{\"drops\":" << drops << ",\"tx_packets\":" << btlTxPkts
       << ",\"utilization\":" << utilization << ",\"other_queue_drops\":" << otherDrops << "}";
    js << ",\"segments_delivered\":" << totalSegs;
    js << ",\"events\":" << events;
    js << ",\"sim_seconds\":" << simSeconds;
    js << ",\"wall_seconds\":" << wall;
    js << ",\"setup_seconds\":" << setupWall;
    js << ",\"peak_rss_mb\":" << PeakRssMb();
    js << "}";

    Simulator::Destroy();
    std::cout << js.str() << std::endl;
    return 0;
}
