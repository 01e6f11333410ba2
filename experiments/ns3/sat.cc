// Saturated 802.11g (or 802.11a) uploads in ns-3, for comparison with `coopcc emu validate
// --rate-control K` (docs/emulator.md, "Comparison with ns-3").
//
// N stations 1 m from the AP (no channel errors: every failure is a
// collision), each sending 1472-byte UDP payloads (1500-byte IP packets) to
// a sink on the AP as fast as its queue takes them, under one of ns-3's
// rate managers. Prints: manager,n,msdu_mbps,mean_phy_mbps,jain,seed,standard.
//
// --standard=a: ns-3's 802.11g rate set includes the DSSS/CCK rates (1, 2, 5.5,
// 11 Mbps), where ARF and AARF end up under contention; the emulator's 802.11g
// preset has only the ERP-OFDM rates (6..54). 802.11a has exactly those OFDM
// rates, and its per-attempt overhead equals 802.11g's short-slot ERP-OFDM one
// (DIFS 34 + SIFS 16 = DIFS 28 + SIFS 10 + 2 x 6 us signal extension), so it
// is the like-for-like rate set (only the ACK timeout differs, by a few us).
//
// --transport=tcp: instead, each station runs one bulk TCP upload (ns-3's
// TcpCubic, 1448-byte segments, 4 MB socket buffers, delayed ACK every 2
// segments) to a server behind the AP on a 100 Mbit/s point-to-point link
// of delay/2 each way, as the lab's `cubic` mode through the emulator
// (experiments/ns3/tcp-*.toml). Every device's MAC queue holds --queue
// packets and no queue disc runs (ns-3 installs fq_codel by default; the
// lab's kernel has none). Prints: manager,n,goodput_mbps,mean_phy_mbps,jain,
// seed,standard,delay_ms,queue (goodput = TCP payload).
//
// Build: see run.sh (links against the ns-3 libraries of the PyPI `ns3` wheel).
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <iostream>
#include <map>

using namespace ns3;

static double g_rateSum = 0, g_rateFrames = 0;
static bool g_measuring = false;

static void
SnifferRx(Ptr<const Packet> p, uint16_t, WifiTxVector tx, MpduInfo, SignalNoiseDbm, uint16_t)
{
    if (!g_measuring || p->GetSize() < 1500) // data frames only (1500 B IP + headers)
    {
        return;
    }
    g_rateSum += tx.GetMode().GetDataRate(MHz_u{20}) / 1e6;
    g_rateFrames++;
}

int
main(int argc, char* argv[])
{
    uint32_t n = 5;
    std::string manager = "constant";
    double seconds = 10, warmup = 2;
    uint32_t seed = 1;
    std::string standard = "g";
    std::string transport = "udp";
    double delayMs = 4;
    uint32_t queue = 1000;
    CommandLine cmd;
    cmd.AddValue("standard", "g (802.11g, DSSS+ERP-OFDM rates) or a (OFDM rates only)", standard);
    cmd.AddValue("n", "stations", n);
    cmd.AddValue("manager", "constant|arf|aarf|minstrel", manager);
    cmd.AddValue("seconds", "measured seconds", seconds);
    cmd.AddValue("seed", "run number", seed);
    cmd.AddValue("transport", "udp (saturated, sink on the AP) or tcp (bulk uploads to a server behind the AP)", transport);
    cmd.AddValue("delay", "tcp: round-trip delay of the wired link, ms", delayMs);
    cmd.AddValue("queue", "tcp: every MAC queue's limit, packets", queue);
    cmd.Parse(argc, argv);
    bool tcp = transport == "tcp";
    if (!tcp && transport != "udp")
    {
        std::cerr << "unknown transport " << transport << "\n";
        return 2;
    }
    if (tcp)
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
        Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
        Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
        Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
        Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
        Config::SetDefault("ns3::WifiMacQueue::MaxSize", QueueSizeValue(QueueSize(std::to_string(queue) + "p")));
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    NodeContainer ap, stas;
    ap.Create(1);
    stas.Create(n);

    YansWifiChannelHelper channel = YansWifiChannelHelper::Default();
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    WifiHelper wifi;
    bool a = standard == "a";
    wifi.SetStandard(a ? WIFI_STANDARD_80211a : WIFI_STANDARD_80211g);
    if (manager == "constant")
    {
        wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode",
                                     StringValue(a ? "OfdmRate54Mbps" : "ErpOfdmRate54Mbps"), "ControlMode",
                                     StringValue(a ? "OfdmRate24Mbps" : "ErpOfdmRate24Mbps"));
    }
    else if (manager == "arf")
    {
        wifi.SetRemoteStationManager("ns3::ArfWifiManager");
    }
    else if (manager == "aarf")
    {
        wifi.SetRemoteStationManager("ns3::AarfWifiManager");
    }
    else if (manager == "minstrel")
    {
        wifi.SetRemoteStationManager("ns3::MinstrelWifiManager");
    }
    else
    {
        std::cerr << "unknown manager " << manager << "\n";
        return 2;
    }
    // 802.11g only (no 802.11b rates, short slot), as the emulator's preset.
    Config::SetDefault("ns3::WifiRemoteStationManager::ErpProtectionMode", StringValue("Cts-To-Self"));
    Config::SetDefault("ns3::WifiRemoteStationManager::RtsCtsThreshold", UintegerValue(65535));
    Config::SetDefault("ns3::WifiRemoteStationManager::FragmentationThreshold", UintegerValue(65535));
    WifiMacHelper mac;
    Ssid ssid("sat");
    mac.SetType("ns3::StaWifiMac", "Ssid", SsidValue(ssid), "ActiveProbing", BooleanValue(false));
    NetDeviceContainer staDevs = wifi.Install(phy, mac, stas);
    mac.SetType("ns3::ApWifiMac", "Ssid", SsidValue(ssid), "EnableNonErpProtection", BooleanValue(false));
    NetDeviceContainer apDev = wifi.Install(phy, mac, ap);

    MobilityHelper mob;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0, 0, 0));
    for (uint32_t i = 0; i < n; i++)
    {
        double a = 2 * M_PI * i / n;
        pos->Add(Vector(std::cos(a), std::sin(a), 0)); // 1 m from the AP
    }
    mob.SetPositionAllocator(pos);
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mob.Install(ap);
    mob.Install(stas);

    NodeContainer server;
    server.Create(1);
    InternetStackHelper stack;
    stack.Install(ap);
    stack.Install(stas);
    stack.Install(server);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.0.0", "255.255.0.0");
    Ipv4InterfaceContainer apIf = addr.Assign(apDev);
    addr.Assign(staDevs);
    Ipv4Address serverAddr;
    if (tcp)
    {
        PointToPointHelper wire;
        wire.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
        wire.SetChannelAttribute("Delay", TimeValue(MilliSeconds(delayMs / 2)));
        wire.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("1000p")));
        NetDeviceContainer wired = wire.Install(ap.Get(0), server.Get(0));
        addr.SetBase("10.2.0.0", "255.255.255.0");
        serverAddr = addr.Assign(wired).GetAddress(1);
        TrafficControlHelper tch;
        tch.Uninstall(wired);
        tch.Uninstall(apDev);
        tch.Uninstall(staDevs);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < n; i++)
    {
        uint16_t port = 9000 + i;
        std::string factory = tcp ? "ns3::TcpSocketFactory" : "ns3::UdpSocketFactory";
        PacketSinkHelper sink(factory, InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sink.Install(tcp ? server.Get(0) : ap.Get(0));
        s.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(s.Get(0)));
        ApplicationContainer c;
        if (tcp)
        {
            BulkSendHelper src(factory, InetSocketAddress(serverAddr, port));
            src.SetAttribute("SendSize", UintegerValue(1448));
            c = src.Install(stas.Get(i));
        }
        else
        {
            OnOffHelper src(factory, InetSocketAddress(apIf.GetAddress(0), port));
            src.SetConstantRate(DataRate("60Mbps"), 1472); // far above any station's share
            c = src.Install(stas.Get(i));
        }
        c.Start(Seconds(0.5 + 0.01 * i));
    }
    Config::ConnectWithoutContext("/NodeList/0/DeviceList/*/$ns3::WifiNetDevice/Phy/MonitorSnifferRx",
                                  MakeCallback(&SnifferRx));

    std::vector<uint64_t> start(n);
    Simulator::Schedule(Seconds(warmup), [&]() {
        g_measuring = true;
        for (uint32_t i = 0; i < n; i++)
        {
            start[i] = sinks[i]->GetTotalRx();
        }
    });
    Simulator::Stop(Seconds(warmup + seconds));
    Simulator::Run();
    double total = 0, sum = 0, sq = 0;
    for (uint32_t i = 0; i < n; i++)
    {
        double b = sinks[i]->GetTotalRx() - start[i];
        total += b;
        sum += b;
        sq += b * b;
    }
    // UDP: MSDU (IP packet) Mbit/s; TCP: goodput (payload) Mbit/s.
    double mbps = total * 8 / seconds / 1e6 * (tcp ? 1.0 : 1500.0 / 1472.0);
    double jain = sq > 0 ? sum * sum / (n * sq) : 0;
    double mean = g_rateFrames > 0 ? g_rateSum / g_rateFrames : 0;
    std::cout << manager << "," << n << "," << mbps << "," << mean << "," << jain << "," << seed << "," << standard;
    if (tcp)
    {
        std::cout << "," << delayMs << "," << queue;
    }
    std::cout << "\n";
    Simulator::Destroy();
    return 0;
}
