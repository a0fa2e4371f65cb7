# The ns-2 agents behind the swarm's defaults (tests/test_ns2_agents.py runs this):
#   ns agents.tcl CASE TRACE
# CASE fulltcp: the BitTorrent module's connection (SiangYun/BTcode bittorrent_connection.cc:
#   one Agent/TCP/FullTcp/Newreno per side, segsize_ 1460 as bt_flashcrowd_star.tcl). Node 0
#   writes 20 piece messages of 16397 bytes at once; node 1 writes five 17-byte requests,
#   0.3 s apart.
# CASE twoway: the same connection with both sides uploading 100 piece messages at once.
# CASE TCPSink or TCPSink/DelAck: a one-way Agent/TCP/Newreno (packetSize_ 1460) to that sink;
#   node 0's application writes a 17-byte message, then the same 20 piece messages.
# Node 0's uplink is 1 Mb/s, node 1's 8 Mb/s, 10 ms each way; the trace is ns-2's trace-all.
set case [lindex $argv 0]
set ns [new Simulator]
set tf [open [lindex $argv 1] w]
$ns trace-all $tf
set a [$ns node]
set b [$ns node]
$ns simplex-link $a $b 1Mb 10ms DropTail
$ns simplex-link $b $a 8Mb 10ms DropTail
Queue set limit_ 200
# One two-way FullTcp connection from a to b, as the module opens one per pair of peers.
proc fulltcp_pair {} {
    global ns a b up down
    Agent/TCP/FullTcp set segsize_ 1460
    set up [new Agent/TCP/FullTcp/Newreno]
    set down [new Agent/TCP/FullTcp/Newreno]
    $ns attach-agent $a $up
    $ns attach-agent $b $down
    $ns connect $up $down
    $down listen
}
if {$case == "fulltcp"} {
    fulltcp_pair
    $ns at 0.1 "$up advance-bytes [expr 20 * 16397]"
    for {set i 0} {$i < 5} {incr i} {
        $ns at [expr 0.5 + 0.3 * $i] "$down advance-bytes 17"
    }
} elseif {$case == "twoway"} {
    fulltcp_pair
    $ns at 0.1 "$up advance-bytes [expr 100 * 16397]"
    $ns at 0.5 "$down advance-bytes [expr 100 * 16397]"
} else {
    Agent/TCP set packetSize_ 1460
    set up [new Agent/TCP/Newreno]
    set down [new Agent/$case]
    $ns attach-agent $a $up
    $ns attach-agent $b $down
    $ns connect $up $down
    set app [new Application]
    $app attach-agent $up
    $ns at 0.1 "$app send 17"
    $ns at 0.5 "$app send [expr 20 * 16397]"
}
$ns at 25.0 "close $tf; exit 0"
$ns run
