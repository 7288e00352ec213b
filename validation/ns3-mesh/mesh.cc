// ns-3's own IEEE 802.11s mesh (src/mesh: Dot11sStack = peer management + HWMP) on a line of
// hops + 1 mesh points, one flow from point 0 to point `hops`: ccsim's E4 lead
// (validation/ns3-mesh/run.py, validation/e4/results.md).
//
// Defaults are those of ns-3's mesh example (src/mesh/examples/mesh-example.cc):
// MeshHelper::Default() (802.11a, ArfWifiManager), YansWifiChannelHelper::Default()
// (LogDistance, exponent 3, 46.677 dB at 1 m; constant-speed delay), YansWifiPhyHelper
// defaults, Dot11sStack with reactive HWMP, one interface; points `spacing` m apart.
// The options change one thing at a time (the counterfactuals of run.py).
//
// Output: one JSON line on stdout.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mesh-helper.h"
#include "ns3/mesh-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/wifi-module.h"
#include "ns3/yans-wifi-helper.h"

#include <iostream>
#include <regex>
#include <sstream>

using namespace ns3;

static uint64_t g_finalDataFailed = 0; // frames dropped after the retry limit (all points)
static uint64_t g_linkClose = 0;       // peer links closed (counted at both ends)
static uint64_t g_linkOpen = 0;
static uint64_t g_routeChange = 0;

static void
OnFinalDataFailed(Mac48Address)
{
    g_finalDataFailed++;
}

static void
OnLinkClose(Mac48Address, Mac48Address)
{
    g_linkClose++;
}

static void
OnLinkOpen(Mac48Address, Mac48Address)
{
    g_linkOpen++;
}

static void
OnRouteChange(dot11s::RouteChange)
{
    g_routeChange++;
}

static uint64_t
SumAttr(const std::string& xml, const std::string& name)
{
    std::regex re(name + "=\"([0-9]+)\"");
    uint64_t sum = 0;
    for (auto it = std::sregex_iterator(xml.begin(), xml.end(), re); it != std::sregex_iterator(); ++it)
    {
        sum += std::stoull((*it)[1]);
    }
    return sum;
}

int
main(int argc, char* argv[])
{
    uint32_t hops = 2;
    double spacing = 50.0;
    double simTime = 30.0;  // seconds of traffic
    double start = 1.0;     // traffic starts (mesh peering has 1 s to form)
    uint32_t seed = 1;
    std::string transport = "tcp";
    double udpRateMbps = 30.0;
    std::string manager = "arf";     // arf | constant | minstrel | ideal
    std::string mode = "OfdmRate54Mbps";
    std::string root = "none";       // none | src: proactive HWMP rooted at point 0
    uint32_t maxPacketFailure = 2;   // ns-3 PeerLink defaults
    uint32_t maxBeaconLoss = 2;
    uint32_t segment = 1448;
    std::string cc = "ns3::TcpCubic";
    double preambleMinRssi = -82.0;  // ThresholdPreambleDetectionModel::MinimumRssi (ns-3 default)

    CommandLine cmd(__FILE__);
    cmd.AddValue("hops", "hops (hops + 1 mesh points)", hops);
    cmd.AddValue("spacing", "distance between neighbouring points, m", spacing);
    cmd.AddValue("time", "seconds of traffic", simTime);
    cmd.AddValue("start", "traffic start, s", start);
    cmd.AddValue("seed", "RngRun", seed);
    cmd.AddValue("transport", "tcp or udp", transport);
    cmd.AddValue("udpRate", "UDP CBR rate, Mbps of payload", udpRateMbps);
    cmd.AddValue("manager", "rate control: arf (MeshHelper::Default), constant, minstrel, ideal", manager);
    cmd.AddValue("mode", "data mode for --manager=constant", mode);
    cmd.AddValue("root", "none (reactive HWMP) or src (point 0 is a proactive root)", root);
    cmd.AddValue("maxPacketFailure", "ns3::dot11s::PeerLink::MaxPacketFailure", maxPacketFailure);
    cmd.AddValue("maxBeaconLoss", "ns3::dot11s::PeerLink::MaxBeaconLoss", maxBeaconLoss);
    cmd.AddValue("segment", "TCP segment size", segment);
    cmd.AddValue("cc", "TCP congestion control TypeId", cc);
    cmd.AddValue("preambleMinRssi", "ThresholdPreambleDetectionModel::MinimumRssi, dBm", preambleMinRssi);
    cmd.Parse(argc, argv);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(cc));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::dot11s::PeerLink::MaxPacketFailure", UintegerValue(maxPacketFailure));
    Config::SetDefault("ns3::dot11s::PeerLink::MaxBeaconLoss", UintegerValue(maxBeaconLoss));
    Config::SetDefault("ns3::ThresholdPreambleDetectionModel::MinimumRssi", DoubleValue(preambleMinRssi));

    NodeContainer nodes;
    nodes.Create(hops + 1);
    YansWifiPhyHelper phy;
    YansWifiChannelHelper channel = YansWifiChannelHelper::Default();
    phy.SetChannel(channel.Create());

    MeshHelper mesh = MeshHelper::Default();
    mesh.SetStackInstaller("ns3::Dot11sStack");
    mesh.SetSpreadInterfaceChannels(MeshHelper::ZERO_CHANNEL);
    mesh.SetMacType("RandomStart", TimeValue(Seconds(0.1)));
    mesh.SetNumberOfInterfaces(1);
    if (manager == "constant")
    {
        mesh.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode", StringValue(mode),
                                     "ControlMode", StringValue("OfdmRate6Mbps"));
    }
    else if (manager == "minstrel")
    {
        mesh.SetRemoteStationManager("ns3::MinstrelWifiManager");
    }
    else if (manager == "ideal")
    {
        mesh.SetRemoteStationManager("ns3::IdealWifiManager");
    }
    else if (manager != "arf")
    {
        std::cerr << "unknown --manager " << manager << std::endl;
        return 2;
    }
    NetDeviceContainer devs = mesh.Install(phy, nodes);
    mesh.AssignStreams(devs, 0);

    MobilityHelper mobility;
    mobility.SetPositionAllocator("ns3::GridPositionAllocator", "MinX", DoubleValue(0.0), "MinY",
                                  DoubleValue(0.0), "DeltaX", DoubleValue(spacing), "DeltaY",
                                  DoubleValue(spacing), "GridWidth", UintegerValue(hops + 1),
                                  "LayoutType", StringValue("RowFirst"));
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(nodes);

    InternetStackHelper internet;
    internet.Install(nodes);
    Ipv4AddressHelper address;
    address.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = address.Assign(devs);

    std::vector<Ptr<dot11s::HwmpProtocol>> hwmps;
    for (uint32_t i = 0; i < devs.GetN(); i++)
    {
        Ptr<MeshPointDevice> mp = DynamicCast<MeshPointDevice>(devs.Get(i));
        Ptr<dot11s::HwmpProtocol> hwmp = DynamicCast<dot11s::HwmpProtocol>(mp->GetRoutingProtocol());
        hwmps.push_back(hwmp);
        hwmp->TraceConnectWithoutContext("RouteChange", MakeCallback(&OnRouteChange));
        Ptr<dot11s::PeerManagementProtocol> pmp = mp->GetObject<dot11s::PeerManagementProtocol>();
        pmp->TraceConnectWithoutContext("LinkClose", MakeCallback(&OnLinkClose));
        pmp->TraceConnectWithoutContext("LinkOpen", MakeCallback(&OnLinkOpen));
        for (auto& ifc : mp->GetInterfaces())
        {
            Ptr<WifiNetDevice> w = DynamicCast<WifiNetDevice>(ifc);
            w->GetRemoteStationManager()->TraceConnectWithoutContext("MacTxFinalDataFailed",
                                                                      MakeCallback(&OnFinalDataFailed));
        }
    }
    if (root == "src")
    {
        hwmps[0]->SetRoot();
    }
    else if (root != "none")
    {
        std::cerr << "unknown --root " << root << std::endl;
        return 2;
    }

    uint16_t port = 9;
    Address sinkAddr(InetSocketAddress(ifs.GetAddress(hops), port));
    std::string factory = transport == "udp" ? "ns3::UdpSocketFactory" : "ns3::TcpSocketFactory";
    PacketSinkHelper sinkHelper(factory, InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sinkHelper.Install(nodes.Get(hops));
    sinkApp.Start(Seconds(0.0));
    ApplicationContainer src;
    if (transport == "udp")
    {
        OnOffHelper onoff("ns3::UdpSocketFactory", sinkAddr);
        onoff.SetConstantRate(DataRate(uint64_t(udpRateMbps * 1e6)), 1470);
        src = onoff.Install(nodes.Get(0));
    }
    else if (transport == "tcp")
    {
        BulkSendHelper bulk("ns3::TcpSocketFactory", sinkAddr);
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(segment));
        src = bulk.Install(nodes.Get(0));
    }
    else
    {
        std::cerr << "unknown --transport " << transport << std::endl;
        return 2;
    }
    src.Start(Seconds(start));
    src.Stop(Seconds(start + simTime));
    Simulator::Stop(Seconds(start + simTime));
    Simulator::Run();

    uint64_t rx = DynamicCast<PacketSink>(sinkApp.Get(0))->GetTotalRx();
    std::ostringstream rep;
    for (auto& h : hwmps)
    {
        h->Report(rep);
    }
    std::string xml = rep.str();
    std::cout << "{\"hops\": " << hops << ", \"spacing\": " << spacing << ", \"time\": " << simTime
              << ", \"seed\": " << seed << ", \"transport\": \"" << transport << "\", \"manager\": \""
              << manager << "\", \"mode\": \"" << mode << "\", \"root\": \"" << root
              << "\", \"maxPacketFailure\": " << maxPacketFailure << ", \"maxBeaconLoss\": " << maxBeaconLoss
              << ", \"preambleMinRssi\": " << preambleMinRssi
              << ", \"throughput_mbps\": " << rx * 8.0 / simTime / 1e6 << ", \"rx_bytes\": " << rx
              << ", \"mac_final_data_failed\": " << g_finalDataFailed << ", \"peer_link_close\": " << g_linkClose
              << ", \"peer_link_open\": " << g_linkOpen << ", \"route_changes\": " << g_routeChange
              << ", \"hwmp_dropped\": " << SumAttr(xml, "totalDropped")
              << ", \"hwmp_initiated_preq\": " << SumAttr(xml, "initiatedPreq")
              << ", \"hwmp_tx_mgt\": " << SumAttr(xml, "txMgt") << "}" << std::endl;
    Simulator::Destroy();
    return 0;
}
