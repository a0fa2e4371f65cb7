# Floyd's early-loss path (scenarios/lfn-early-loss.toml) in ns-2 (2.35), for bench/run.py's
# `ns2-floyd` case: standard TCP with SACK, one drop early in slow start, run to the
# 3500-segment window cap (slowstart reaches it at 279.6 s; Floyd's notes: 284 s).
#
#   sender --10 Gbps, 0 ms-- router --500 Mbps, 40 ms, drop-tail 6666 packets-- receiver
#
# As slowstart resolves the scenario: 1460-byte segments (1500 bytes on the wire), initial
# window 2, no delayed ACKs, per-ACK window increase (ns-2's own), window cap 3500 segments,
# a 10 MB (two-BDP) queue that never fills, and one drop: data packet 40 (ns-2 numbers them
# from 0) on the bottleneck. Usage: ns ns2_floyd.tcl [duration_s, default 285]
#
# It prints one JSON line: when cwnd first reached the cap, data packets sent, packets
# retransmitted, highest segment acknowledged.

set duration 285.0
if {$argc >= 1} { set duration [lindex $argv 0] }
set cap 3500

set ns [new Simulator]

set sender [$ns node]
set router [$ns node]
set receiver [$ns node]
$ns duplex-link $sender $router 10Gb 0ms DropTail
$ns duplex-link $router $receiver 500Mb 40ms DropTail
# 2 BDP = 10 000 000 bytes = 6666 packets of 1500 bytes; the access queue never builds.
$ns queue-limit $router $receiver 6666
$ns queue-limit $receiver $router 6666
$ns queue-limit $sender $router 100000
$ns queue-limit $router $sender 100000

# The one early drop: ErrorModel/List counts the packets it sees (from 0) and drops those
# listed. Only data packets cross router -> receiver, so packet 40 is segment 40.
set em [new ErrorModel/List]
$em droplist {40}
$ns lossmodel $em $router $receiver

set tcp [new Agent/TCP/Sack1]
$tcp set packetSize_ 1460
# No SYN exchange, as the scenario (handshake = false); ns-2 2.35 defaults to syn_ true.
$tcp set syn_ false
$tcp set windowInit_ 2
$tcp set window_ $cap
$tcp set maxcwnd_ $cap
$ns attach-agent $sender $tcp
set sink [new Agent/TCPSink/Sack1]
$ns attach-agent $receiver $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp

# Time the window first reaches the cap, checked once per 10 ms (as slowstart's trace).
set cap_time -1
proc check_cap {} {
    global ns tcp cap cap_time
    if {$cap_time < 0} {
        if {[$tcp set cwnd_] >= $cap} {
            set cap_time [$ns now]
        } else {
            $ns at [expr {[$ns now] + 0.01}] check_cap
        }
    }
}

proc finish {} {
    global ns tcp cap_time
    puts [format "{\"time_to_window_cap_s\": %s, \"data_packets_sent\": %d, \"retransmits\": %d, \"highest_ack\": %d}" \
        $cap_time [$tcp set ndatapack_] [$tcp set nrexmitpack_] [$tcp set ack_]]
    exit 0
}

$ns at 0.0 "$ftp start"
$ns at 0.0 check_cap
$ns at $duration finish
$ns run
