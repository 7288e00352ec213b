// ns-3 reference for ccsim's 802.11 DCF line (crates/ccsim-core/src/wireless/dcf.rs),
// docs/validation.md, section "802.11 line: ccsim vs ns-3".
//
// Stations 0..=hops stand in a line. UDP CBR flows (default: one, 0 -> hops, 1000-byte
// payloads at 5000 datagrams/s, past saturation for both profiles) are routed hop by hop with
// Ipv4StaticRouting host routes; ARP caches are filled before the start (NeighborCacheHelper);
// no traffic-control queue disc: the only queue of a station is its WifiMacQueue
// (MaxSize --queue packets, MaxDelay effectively infinite instead of ns-3's 500 ms, so old
// packets are not dropped), drop-tail like ccsim's interface queue.
//
// PHY / MAC, matching ccsim's profiles (crates/ccsim-core/src/wireless/phy.rs):
//   80211g        WIFI_STANDARD_80211g, ErpOfdmRate54Mbps data; ACKs at the highest mandatory
//                 rate not above the data rate (ErpOfdmRate24Mbps), non-QoS DCF (AIFSN 2).
//   80211n-20mhz  WIFI_STANDARD_80211n at 2.4 GHz, HtMcs7 (65 Mbps, long GI, HT-mixed), QoS
//                 data (AC_BE) without A-MPDU or A-MSDU; ACKs ErpOfdmRate24Mbps. AC_BE's AIFSN
//                 is set to 2 (= DIFS, as ccsim) unless --aifsn says otherwise (0 = ns-3's
//                 default, 3 for AC_BE).
//   both          ConstantRateWifiManager, slot 9 us (ns-3 uses 20 us for 802.11g unless told),
//                 SIFS 10 us, CWmin 15, CWmax 1023, RTS/CTS and fragmentation off (frames are far
//                 below the thresholds), FrameRetryLimit = --retryLimit transmission
//                 attempts (dot11ShortRetryLimit; ccsim's retry_limit counts the same).
//
// Channel (--propagation=matrix, the default): YansWifiChannel with a
// MatrixPropagationLossModel that gives every pair of stations one hop apart a received power
// of --rx1 dBm, two hops apart --rx2 dBm, and three or more hops apart nothing (1000 dB loss:
// below RxSensitivity, which Yans drops before it reaches the PHY, so it neither interferes nor
// is sensed). With the defaults (rx1 -50, rx2 -52, ThresholdPreambleDetectionModel
// MinimumRssi --minRssi -51 dBm, CcaEdThreshold -62 dBm, noise floor about -94 dBm):
//   1 hop:  preamble detected, frame decoded (SNR 44 dB), NAV from its Duration field;
//   2 hops: preamble not detected (RSSI below MinimumRssi), so never decoded and no NAV, but
//           sensed by energy detection (above CcaEdThreshold), and as interference it leaves a
//           1-hop signal 2 dB of SINR: any reception it overlaps fails, data and ACK alike;
//   3 hops: nothing.
// That is ccsim's rx_reach = 1, cs_reach = 2, if_reach = 2. --propagation=logdistance
// instead places stations --spacing m apart with LogDistancePropagationLossModel
// (--exponent, reference loss 40.05 dB at 1 m) and the same thresholds: a geometric channel
// where interference is a matter of SINR, not of reach.
//
// Experiments (docs/validation.md says which changes what):
//   --eifs=0          no EIFS: a ChannelAccessManager whose GetEifsNoDifs() is 0, so after a
//                     failed reception a station waits DIFS as ccsim does (default 1: ns-3's
//                     EIFS = SIFS + ACK time + DIFS after every failed reception).
//   --capture=1       SimpleFrameCaptureModel (default: none, as ccsim).
//   --aifsn=N         AIFSN of the data access category (default 2; 0 keeps ns-3's).
//
// Output: exactly one JSON line on stdout: per flow sent/received/lost/throughput over the
// measurement window [start + warmup, start + warmup + duration] (and over the whole run), per
// station MAC/PHY counters, and the timings ns-3 actually used (slot, SIFS, EIFS, airtimes).
//
// Build: bash validation/ns3-wifi/build.sh (compiles against the PyPI ns3 wheel).

#include "ns3/applications-module.h"
#include "ns3/channel-access-manager.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/propagation-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <chrono>
#include <iomanip>
#include <map>
#include <sstream>

namespace ns3
{

/// ChannelAccessManager without EIFS (--eifs=0): after a failed reception the backoff starts
/// DIFS after the medium went idle, as after a good one.
class NoEifsChannelAccessManager : public ChannelAccessManager
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::CcsimNoEifsChannelAccessManager")
                                .SetParent<ChannelAccessManager>()
                                .SetGroupName("Wifi")
                                .AddConstructor<NoEifsChannelAccessManager>();
        return tid;
    }

  private:
    Time GetEifsNoDifs() const override
    {
        return Seconds(0);
    }
};

NS_OBJECT_ENSURE_REGISTERED(NoEifsChannelAccessManager);

/// WifiMacHelper that can replace the ChannelAccessManager type.
class LineMacHelper : public WifiMacHelper
{
  public:
    void SetChannelAccessManagerType(const std::string& type)
    {
        m_channelAccessManager.SetTypeId(type);
    }
};

} // namespace ns3

using namespace ns3;

namespace
{

struct FlowSpec
{
    uint32_t src;
    uint32_t dst;
    double pps;
};

struct FlowStats
{
    uint64_t sent = 0;
    uint64_t sentWindow = 0;
    uint64_t received = 0;
    uint64_t receivedWindow = 0;
    uint64_t bytesWindow = 0;
};

struct StationStats
{
    uint64_t dataTx = 0;
    uint64_t ackTx = 0;
    uint64_t otherTx = 0;
    uint64_t acked = 0;
    uint64_t nacked = 0;
    uint64_t retryDrops = 0;
    uint64_t queueDrops = 0;
    uint64_t lifetimeDrops = 0;
    uint64_t rxOk = 0;
    uint64_t rxError = 0;
    std::map<std::string, uint64_t> rxDrop;
    uint64_t ipDrops = 0;
};

Time g_windowStart;
Time g_windowEnd;
std::vector<FlowStats> g_flows;
std::vector<StationStats> g_st;
double g_dataAirtimeUs = -1;
double g_ackAirtimeUs = -1;
std::string g_dataMode;
std::string g_ackMode;

bool
InWindow()
{
    Time now = Simulator::Now();
    return now >= g_windowStart && now < g_windowEnd;
}

void
OnClientTx(uint32_t f, Ptr<const Packet>)
{
    g_flows[f].sent++;
    if (InWindow())
    {
        g_flows[f].sentWindow++;
    }
}

void
OnSinkRx(uint32_t f, Ptr<const Packet> p, const Address&)
{
    g_flows[f].received++;
    if (InWindow())
    {
        g_flows[f].receivedWindow++;
        g_flows[f].bytesWindow += p->GetSize();
    }
}

void
OnPsduTx(uint32_t i, Ptr<WifiPhy> phy, WifiConstPsduMap psdus, WifiTxVector txv, double)
{
    for (const auto& [id, psdu] : psdus)
    {
        const WifiMacHeader& h = psdu->GetHeader(0);
        if (h.IsData())
        {
            g_st[i].dataTx++;
            if (g_dataAirtimeUs < 0)
            {
                g_dataAirtimeUs =
                    WifiPhy::CalculateTxDuration(psdus, txv, phy->GetPhyBand()).GetNanoSeconds() /
                    1e3;
                g_dataMode = txv.GetMode().GetUniqueName();
            }
        }
        else if (h.IsAck())
        {
            g_st[i].ackTx++;
            if (g_ackAirtimeUs < 0)
            {
                g_ackAirtimeUs =
                    WifiPhy::CalculateTxDuration(psdus, txv, phy->GetPhyBand()).GetNanoSeconds() /
                    1e3;
                g_ackMode = txv.GetMode().GetUniqueName();
            }
        }
        else
        {
            g_st[i].otherTx++;
        }
    }
}

void
OnAcked(uint32_t i, Ptr<const WifiMpdu>)
{
    g_st[i].acked++;
}

void
OnNAcked(uint32_t i, Ptr<const WifiMpdu>)
{
    g_st[i].nacked++;
}

void
OnMacDrop(uint32_t i, WifiMacDropReason reason, Ptr<const WifiMpdu>)
{
    switch (reason)
    {
    case WIFI_MAC_DROP_REACHED_RETRY_LIMIT:
        g_st[i].retryDrops++;
        break;
    case WIFI_MAC_DROP_FAILED_ENQUEUE:
        g_st[i].queueDrops++;
        break;
    default:
        g_st[i].lifetimeDrops++;
        break;
    }
}

void
OnRxOk(uint32_t i, Ptr<const Packet>, double, WifiMode, WifiPreamble)
{
    g_st[i].rxOk++;
}

void
OnRxError(uint32_t i, Ptr<const Packet>, double)
{
    g_st[i].rxError++;
}

void
OnRxDrop(uint32_t i, Ptr<const Packet>, WifiPhyRxfailureReason reason)
{
    std::ostringstream os;
    os << reason;
    g_st[i].rxDrop[os.str()]++;
}

void
OnIpDrop(uint32_t i,
         const Ipv4Header&,
         Ptr<const Packet>,
         Ipv4L3Protocol::DropReason,
         Ptr<Ipv4>,
         uint32_t)
{
    g_st[i].ipDrops++;
}

void
OnTcDrop(uint32_t i, Ptr<const Packet>)
{
    g_st[i].queueDrops++;
}

std::vector<FlowSpec>
ParseFlows(const std::string& spec, uint32_t hops, double pps)
{
    std::vector<FlowSpec> out;
    if (spec.empty())
    {
        out.push_back({0, hops, pps});
        return out;
    }
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        FlowSpec f{0, 0, pps};
        auto at = item.find('@');
        if (at != std::string::npos)
        {
            f.pps = std::stod(item.substr(at + 1));
            item = item.substr(0, at);
        }
        auto dash = item.find('-');
        NS_ABORT_MSG_IF(dash == std::string::npos, "--flows: expected src-dst[@pps], got " << item);
        f.src = std::stoul(item.substr(0, dash));
        f.dst = std::stoul(item.substr(dash + 1));
        NS_ABORT_MSG_IF(f.src > hops || f.dst > hops || f.src == f.dst,
                        "--flows: bad stations in " << item);
        out.push_back(f);
    }
    return out;
}

template <typename T>
void
Connect(Ptr<Object> obj, const std::string& name, T cb)
{
    if (!obj->TraceConnectWithoutContext(name, cb))
    {
        TypeId tid = obj->GetInstanceTypeId();
        std::ostringstream os;
        for (TypeId t = tid;; t = t.GetParent())
        {
            for (uint32_t k = 0; k < t.GetTraceSourceN(); k++)
            {
                os << " " << t.GetTraceSource(k).name;
            }
            if (t == t.GetParent())
            {
                break;
            }
        }
        NS_FATAL_ERROR("no trace source " << name << " in " << tid.GetName() << ":" << os.str());
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t hops = 1;
    std::string profile = "80211g";
    uint32_t seed = 1;
    double start = 0.5;
    double warmup = 1.0;
    double duration = 10.0;
    double pps = 5000;
    uint32_t size = 1000;
    uint32_t queue = 1000;
    uint32_t retryLimit = 7;
    std::string flows;
    bool eifs = true;
    bool capture = false;
    uint32_t aifsn = 2;
    std::string propagation = "matrix";
    double txPower = 20.0;
    double rx1 = -50.0;
    double rx2 = -52.0;
    double minRssi = -51.0;
    double ccaEd = -62.0;
    double rxSensitivity = -101.0;
    double spacing = 30.0;
    double exponent = 3.0;

    CommandLine cmd(__FILE__);
    cmd.AddValue("hops", "number of hops (stations 0..=hops)", hops);
    cmd.AddValue("profile", "80211g or 80211n-20mhz", profile);
    cmd.AddValue("seed", "RngRun", seed);
    cmd.AddValue("start", "flow start time (s)", start);
    cmd.AddValue("warmup", "seconds after the start before the measurement window", warmup);
    cmd.AddValue("duration", "measurement window (s)", duration);
    cmd.AddValue("pps", "datagrams per second of each flow (default of --flows)", pps);
    cmd.AddValue("size", "UDP payload bytes", size);
    cmd.AddValue("queue", "WifiMacQueue size (packets)", queue);
    cmd.AddValue("retryLimit", "transmission attempts before a frame is dropped (dot11ShortRetryLimit, as ccsim)", retryLimit);
    cmd.AddValue("flows", "src-dst[@pps],... (default 0-hops)", flows);
    cmd.AddValue("eifs", "use EIFS after failed receptions (ns-3 default)", eifs);
    cmd.AddValue("capture", "install SimpleFrameCaptureModel", capture);
    cmd.AddValue("aifsn", "AIFSN of the data access category (0 = ns-3's default)", aifsn);
    cmd.AddValue("propagation", "matrix or logdistance", propagation);
    cmd.AddValue("txPower", "transmit power (dBm)", txPower);
    cmd.AddValue("rx1", "matrix: received power one hop away (dBm)", rx1);
    cmd.AddValue("rx2", "matrix: received power two hops away (dBm)", rx2);
    cmd.AddValue("minRssi", "ThresholdPreambleDetectionModel::MinimumRssi (dBm)", minRssi);
    cmd.AddValue("ccaEd", "WifiPhy::CcaEdThreshold (dBm)", ccaEd);
    cmd.AddValue("rxSensitivity", "WifiPhy::RxSensitivity (dBm)", rxSensitivity);
    cmd.AddValue("spacing", "logdistance: distance between neighbours (m)", spacing);
    cmd.AddValue("exponent", "logdistance: path loss exponent", exponent);
    cmd.Parse(argc, argv);

    NS_ABORT_MSG_UNLESS(profile == "80211g" || profile == "80211n-20mhz",
                        "--profile must be 80211g or 80211n-20mhz");
    NS_ABORT_MSG_UNLESS(propagation == "matrix" || propagation == "logdistance",
                        "--propagation must be matrix or logdistance");
    NS_ABORT_MSG_UNLESS(hops >= 1, "--hops must be at least 1");
    const bool g = profile == "80211g";
    auto specs = ParseFlows(flows, hops, pps);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::WifiMacQueue::MaxSize",
                       QueueSizeValue(QueueSize(std::to_string(queue) + "p")));
    Config::SetDefault("ns3::WifiMacQueue::MaxDelay", TimeValue(Seconds(1e6)));

    NodeContainer nodes;
    nodes.Create(hops + 1);
    MobilityHelper mobility;
    auto pos = CreateObject<ListPositionAllocator>();
    for (uint32_t i = 0; i <= hops; i++)
    {
        pos->Add(Vector(spacing * i, 0, 0));
    }
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(nodes);

    auto channel = CreateObject<YansWifiChannel>();
    channel->SetPropagationDelayModel(CreateObject<ConstantSpeedPropagationDelayModel>());
    if (propagation == "matrix")
    {
        auto loss = CreateObject<MatrixPropagationLossModel>();
        loss->SetDefaultLoss(1000);
        for (uint32_t i = 0; i <= hops; i++)
        {
            for (uint32_t j = i + 1; j <= hops && j <= i + 2; j++)
            {
                double rx = (j - i == 1) ? rx1 : rx2;
                loss->SetLoss(nodes.Get(i)->GetObject<MobilityModel>(),
                              nodes.Get(j)->GetObject<MobilityModel>(),
                              txPower - rx,
                              true);
            }
        }
        channel->SetPropagationLossModel(loss);
    }
    else
    {
        auto loss = CreateObject<LogDistancePropagationLossModel>();
        loss->SetAttribute("Exponent", DoubleValue(exponent));
        channel->SetPropagationLossModel(loss);
    }

    YansWifiPhyHelper phy;
    phy.SetChannel(channel);
    phy.Set("ChannelSettings", StringValue("{1, 20, BAND_2_4GHZ, 0}"));
    phy.Set("TxPowerStart", DoubleValue(txPower));
    phy.Set("TxPowerEnd", DoubleValue(txPower));
    phy.Set("TxPowerLevels", UintegerValue(1));
    phy.Set("RxSensitivity", DoubleValue(rxSensitivity));
    phy.Set("CcaEdThreshold", DoubleValue(ccaEd));
    phy.SetPreambleDetectionModel("ns3::ThresholdPreambleDetectionModel",
                                  "MinimumRssi",
                                  DoubleValue(minRssi));
    if (capture)
    {
        phy.SetFrameCaptureModel("ns3::SimpleFrameCaptureModel");
    }

    WifiHelper wifi;
    wifi.SetStandard(g ? WIFI_STANDARD_80211g : WIFI_STANDARD_80211n);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue(g ? "ErpOfdmRate54Mbps" : "HtMcs7"),
                                 "ControlMode",
                                 StringValue("ErpOfdmRate24Mbps"));

    LineMacHelper mac;
    mac.SetType("ns3::AdhocWifiMac",
                "QosSupported",
                BooleanValue(!g),
                "FrameRetryLimit",
                UintegerValue(retryLimit),
                "BE_MaxAmpduSize",
                UintegerValue(0),
                "BE_MaxAmsduSize",
                UintegerValue(0));
    if (!eifs)
    {
        mac.SetChannelAccessManagerType("ns3::CcsimNoEifsChannelAccessManager");
    }
    NetDeviceContainer devs = wifi.Install(phy, mac, nodes);
    wifi.AssignStreams(devs, 100);

    // Timings and contention parameters after the standard's defaults were applied.
    uint32_t cwMin = 0;
    uint32_t cwMax = 0;
    uint32_t aifsnUsed = 0;
    for (uint32_t i = 0; i <= hops; i++)
    {
        auto dev = DynamicCast<WifiNetDevice>(devs.Get(i));
        auto p = dev->GetPhy();
        p->SetSlot(MicroSeconds(9));
        p->SetSifs(MicroSeconds(10));
        p->SetPifs(MicroSeconds(19));
        Ptr<Txop> txop = g ? dev->GetMac()->GetTxop() : Ptr<Txop>(dev->GetMac()->GetQosTxop(AC_BE));
        txop->SetMinCw(15);
        txop->SetMaxCw(1023);
        if (aifsn > 0)
        {
            txop->SetAifsn(aifsn);
        }
        cwMin = txop->GetMinCw();
        cwMax = txop->GetMaxCw();
        aifsnUsed = txop->GetAifsn();
    }

    InternetStackHelper internet;
    internet.Install(nodes);
    Ipv4AddressHelper address("10.1.0.0", "255.255.0.0");
    Ipv4InterfaceContainer ifs = address.Assign(devs);
    TrafficControlHelper().Uninstall(devs); // no queue disc: the WifiMacQueue is the only queue
    Ipv4StaticRoutingHelper srh;
    for (uint32_t i = 0; i <= hops; i++)
    {
        auto ipv4 = nodes.Get(i)->GetObject<Ipv4>();
        auto sr = srh.GetStaticRouting(ipv4);
        uint32_t iface = ipv4->GetInterfaceForDevice(devs.Get(i));
        for (uint32_t d = 0; d <= hops; d++)
        {
            if (d == i)
            {
                continue;
            }
            uint32_t nh = d > i ? i + 1 : i - 1;
            sr->AddHostRouteTo(ifs.GetAddress(d), ifs.GetAddress(nh), iface);
        }
    }
    NeighborCacheHelper().PopulateNeighborCache();

    g_windowStart = Seconds(start + warmup);
    g_windowEnd = Seconds(start + warmup + duration);
    Time stop = g_windowEnd + MilliSeconds(1);
    g_flows.resize(specs.size());
    g_st.resize(hops + 1);
    for (uint32_t f = 0; f < specs.size(); f++)
    {
        uint16_t port = 9000 + f;
        PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        auto sapp = sink.Install(nodes.Get(specs[f].dst));
        sapp.Start(Seconds(0));
        Connect(sapp.Get(0), "Rx", MakeBoundCallback(&OnSinkRx, f));
        UdpClientHelper client(ifs.GetAddress(specs[f].dst), port);
        client.SetAttribute("MaxPackets", UintegerValue(0));
        client.SetAttribute("Interval", TimeValue(Seconds(1.0 / specs[f].pps)));
        client.SetAttribute("PacketSize", UintegerValue(size));
        auto capp = client.Install(nodes.Get(specs[f].src));
        capp.Start(Seconds(start));
        capp.Stop(g_windowEnd);
        Connect(capp.Get(0), "Tx", MakeBoundCallback(&OnClientTx, f));
    }
    for (uint32_t i = 0; i <= hops; i++)
    {
        auto dev = DynamicCast<WifiNetDevice>(devs.Get(i));
        auto p = dev->GetPhy();
        Connect(p, "PhyTxPsduBegin", MakeBoundCallback(&OnPsduTx, i, p));
        Connect(p, "PhyRxDrop", MakeBoundCallback(&OnRxDrop, i));
        Connect(p->GetState(), "RxOk", MakeBoundCallback(&OnRxOk, i));
        Connect(p->GetState(), "RxError", MakeBoundCallback(&OnRxError, i));
        auto m = dev->GetMac();
        Connect(m, "AckedMpdu", MakeBoundCallback(&OnAcked, i));
        Connect(m, "NAckedMpdu", MakeBoundCallback(&OnNAcked, i));
        Connect(m, "DroppedMpdu", MakeBoundCallback(&OnMacDrop, i));
        Connect(nodes.Get(i)->GetObject<Ipv4L3Protocol>(), "Drop", MakeBoundCallback(&OnIpDrop, i));
        Connect(nodes.Get(i)->GetObject<TrafficControlLayer>(), "TcDrop", MakeBoundCallback(&OnTcDrop, i));
    }

    auto t0 = std::chrono::steady_clock::now();
    Simulator::Stop(stop);
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    auto dev0 = DynamicCast<WifiNetDevice>(devs.Get(0));
    auto p0 = dev0->GetPhy();
    double slotUs = p0->GetSlot().GetNanoSeconds() / 1e3;
    double sifsUs = p0->GetSifs().GetNanoSeconds() / 1e3;
    double ackTxTimeUs = p0->GetAckTxTime().GetNanoSeconds() / 1e3;
    uint64_t events = Simulator::GetEventCount();

    std::ostringstream js;
    js << std::setprecision(10);
    js << "{\"sim\":\"ns3\",\"hops\":" << hops << ",\"profile\":\"" << profile
       << "\",\"seed\":" << seed << ",\"warmup_s\":" << warmup << ",\"duration_s\":" << duration
       << ",\"size\":" << size << ",\"queue\":" << queue << ",\"retry_limit\":" << retryLimit
       << ",\"eifs\":" << (eifs ? "true" : "false") << ",\"capture\":" << (capture ? "true" : "false")
       << ",\"propagation\":\"" << propagation << "\"";
    js << ",\"config\":{\"slot_us\":" << slotUs << ",\"sifs_us\":" << sifsUs
       << ",\"aifsn\":" << aifsnUsed << ",\"cw_min\":" << cwMin << ",\"cw_max\":" << cwMax
       << ",\"eifs_us\":" << (eifs ? sifsUs + ackTxTimeUs + sifsUs + aifsnUsed * slotUs : sifsUs + aifsnUsed * slotUs)
       << ",\"ack_tx_time_for_eifs_us\":" << ackTxTimeUs << ",\"data_airtime_us\":" << g_dataAirtimeUs
       << ",\"ack_airtime_us\":" << g_ackAirtimeUs << ",\"data_mode\":\"" << g_dataMode
       << "\",\"ack_mode\":\"" << g_ackMode << "\",\"rx1_dbm\":" << rx1 << ",\"rx2_dbm\":" << rx2
       << ",\"min_rssi_dbm\":" << minRssi << ",\"cca_ed_dbm\":" << ccaEd
       << ",\"rx_sensitivity_dbm\":" << rxSensitivity << ",\"spacing_m\":" << spacing
       << ",\"exponent\":" << exponent << "}";
    js << ",\"flows\":[";
    double total = 0;
    for (uint32_t f = 0; f < specs.size(); f++)
    {
        const auto& s = g_flows[f];
        double thr = s.bytesWindow * 8.0 / duration / 1e6;
        total += thr;
        uint64_t lost = s.sentWindow > s.receivedWindow ? s.sentWindow - s.receivedWindow : 0;
        js << (f ? "," : "") << "{\"id\":" << f << ",\"src\":" << specs[f].src
           << ",\"dst\":" << specs[f].dst << ",\"pps\":" << specs[f].pps
           << ",\"sent\":" << s.sentWindow << ",\"received\":" << s.receivedWindow
           << ",\"lost\":" << lost << ",\"loss_ratio\":"
           << (s.sentWindow ? double(lost) / s.sentWindow : 0.0) << ",\"throughput_mbps\":" << thr
           << ",\"sent_total\":" << s.sent << ",\"received_total\":" << s.received << "}";
    }
    js << "],\"total_throughput_mbps\":" << total << ",\"stations\":[";
    for (uint32_t i = 0; i <= hops; i++)
    {
        const auto& s = g_st[i];
        js << (i ? "," : "") << "{\"station\":" << i << ",\"data_tx\":" << s.dataTx
           << ",\"ack_tx\":" << s.ackTx << ",\"other_tx\":" << s.otherTx << ",\"acked\":" << s.acked
           << ",\"ack_timeouts\":" << s.nacked << ",\"retry_drops\":" << s.retryDrops
           << ",\"queue_drops\":" << s.queueDrops << ",\"lifetime_drops\":" << s.lifetimeDrops
           << ",\"ip_drops\":" << s.ipDrops << ",\"rx_ok\":" << s.rxOk
           << ",\"rx_error\":" << s.rxError << ",\"rx_drop\":{";
        bool first = true;
        for (const auto& [k, v] : s.rxDrop)
        {
            js << (first ? "" : ",") << "\"" << k << "\":" << v;
            first = false;
        }
        js << "}}";
    }
    js << "],\"events\":" << events << ",\"wall_s\":" << wall << "}";
    std::cout << js.str() << std::endl;
    Simulator::Destroy();
    return 0;
}
