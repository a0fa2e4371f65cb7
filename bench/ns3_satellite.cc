// The satellite transfer of scenarios/satellite.toml in ns-3 (3.37), for bench/run.py's
// `ns3-satellite` case: one 100 MB TCP transfer over 250 Mbps with 600 ms RTT and a
// one-BDP drop-tail queue, behind a 10 Gbps access link, as slowstart resolves the scenario.
//
//   sender --10 Gbps, 0 ms-- router --250 Mbps, 300 ms, 12 500-packet queue-- receiver
//
// TCP as slowstart's flow: 1460-byte segments (ns-3's default is 536) with 40-byte headers
// (timestamps off, so a data packet is 1500 bytes as in slowstart), initial window 10, SYN
// handshake, delayed ACKs every 2 segments or 40 ms, SACK, PRR recovery, 200 ms minimum RTO,
// Linux-style Reno (TcpLinuxReno: slow start counts the segments an ACK covers, as slowstart's
// `abc = true` does). Socket buffers are large enough never to limit the window.
//
// It stops when the receiver has the 100 MB and prints one JSON line: completion time, data
// packets the sender sent, bottleneck drops, events executed.
//
// Build (bench/run.py does this in a temporary directory):
//   g++ -O2 -std=c++17 ns3_satellite.cc -o ns3_satellite -lns3-core -lns3-network ...
//   (every /usr/lib/x86_64-linux-gnu/libns3-*.so)

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdint>
#include <cstdio>

using namespace ns3;

static const uint64_t kSize = 100000000; // "100MB"
static uint64_t g_received = 0;
static double g_completion = -1;
static uint64_t g_sent = 0;
static uint64_t g_forwarded = 0;

static void
OnRx(Ptr<const Packet> p, const Address&)
{
    g_received += p->GetSize();
    if (g_completion < 0 && g_received >= kSize)
    {
        g_completion = Simulator::Now().GetSeconds();
        Simulator::Stop();
    }
}

// Data packets (not SYN or ACKs) the sender puts on the access link.
static void
OnSend(Ptr<const Packet> p)
{
    if (p->GetSize() > 1000)
    {
        g_sent++;
    }
}

// Data packets the router sends on the bottleneck. The drop-tail limit is the device queue's:
// when it is full, ns-3's traffic-control layer drops what the router forwards, and its "Drop"
// trace would not connect from here, so drops are counted as sent - forwarded.
static void
OnForward(Ptr<const Packet> p)
{
    if (p->GetSize() > 1000)
    {
        g_forwarded++;
    }
}

int
main(int argc, char* argv[])
{
    double stop = 60; // the scenario's duration, if the transfer never ends
    CommandLine cmd;
    cmd.AddValue("stop", "simulated seconds at most", stop);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpLinuxReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpPrrRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 28));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 28));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));

    NodeContainer nodes;
    nodes.Create(3); // sender, router, receiver

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    access.SetChannelAttribute("Delay", StringValue("0ms"));
    access.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("100000p"));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("250Mbps"));
    bottleneck.SetChannelAttribute("Delay", StringValue("300ms"));
    // One BDP: 18.75 MB, 12 500 packets of 1500 bytes.
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("12500p"));

    NetDeviceContainer a = access.Install(nodes.Get(0), nodes.Get(1));
    NetDeviceContainer b = bottleneck.Install(nodes.Get(1), nodes.Get(2));

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper address;
    address.SetBase("10.0.1.0", "255.255.255.0");
    address.Assign(a);
    address.SetBase("10.0.2.0", "255.255.255.0");
    Ipv4InterfaceContainer bi = address.Assign(b);
    // Assign installs ns-3's default queue disc (FqCoDel); the path is plain drop-tail.
    TrafficControlHelper tch;
    tch.Uninstall(a);
    tch.Uninstall(b);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 5000;
    BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(bi.GetAddress(1), port));
    source.SetAttribute("MaxBytes", UintegerValue(kSize));
    source.SetAttribute("SendSize", UintegerValue(1460));
    ApplicationContainer sender = source.Install(nodes.Get(0));
    sender.Start(Seconds(0));
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sink = sinkHelper.Install(nodes.Get(2));
    sink.Start(Seconds(0));

    sink.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));
    a.Get(0)->TraceConnectWithoutContext("MacTx", MakeCallback(&OnSend));
    b.Get(0)->TraceConnectWithoutContext("MacTx", MakeCallback(&OnForward));

    Simulator::Stop(Seconds(stop));
    Simulator::Run();
    uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();

    std::printf("{\"completion_s\": %.6f, \"bytes_delivered\": %llu, \"data_packets_sent\": %llu, "
                "\"drops\": %llu, \"events\": %llu}\n",
                g_completion,
                (unsigned long long)g_received,
                (unsigned long long)g_sent,
                (unsigned long long)(g_sent - g_forwarded),
                (unsigned long long)events);
    return 0;
}
