//! The sender driven ACK by ACK, with no receiver: what each ACK lets out.

use slowstart_cc::{CcSpec, CommonParams, Controller};

use super::Sender;
use crate::packet::{Kind, Packet, ECE};
use crate::settings::{EcnReduction, Settings};
use crate::testing::{settings, MS};
use crate::Io;

const MSS: u64 = 1460;

/// Data segments sent since the last call.
fn sent(io: &mut Io) -> u64 {
    let n = io.packets.iter().filter(|p| p.kind == Kind::Data).count();
    io.packets.clear();
    n as u64
}

/// DCTCP with 20 segments in flight, ECN on; the first of ten ACKs, each of the next two
/// segments in order, echoes CE (DCTCP's first alpha, 1, halves cwnd to 10 segments). The new
/// segments each ACK lets out.
fn released_after_an_echo(reduction: EcnReduction) -> Vec<u64> {
    let s = Settings {
        ecn: true,
        ecn_reduction: reduction,
        initrwnd: 100_000,
        ..settings()
    };
    let common = CommonParams {
        mss: MSS,
        initcwnd: 20,
        abc: true,
        seed: 1,
        paced: false,
    };
    let dctcp = Controller::new(&CcSpec::named("dctcp"), &common).expect("a built-in");
    let mut sender = Sender::new(0, &s, dctcp);
    let mut io = Io::default();
    sender.write(u64::MAX);
    sender.start(0, false, &mut io);
    assert_eq!(sent(&mut io), 20);
    (1..=10)
        .map(|i| {
            let now = 100 * MS + i * MS;
            let mut ack = Packet::control(0, Kind::Ack, 40, now);
            ack.seq = 2 * i * MSS;
            ack.rwnd = 100_000 * MSS;
            ack.set(ECE, i == 1);
            sender.on_ack(now, &ack, &mut io);
            if i == 1 {
                assert_eq!(sender.ssthresh(), 10 * MSS);
                assert_eq!(sender.cwnd(), 10 * MSS);
            }
            sent(&mut io)
        })
        .collect()
}

/// RFC 6937 in Linux's CWR state (tcp_input.c `tcp_cwnd_reduction`): while pipe is above
/// ssthresh, ssthresh / RecoverFS = 10/20 of what is delivered goes out, one segment per ACK
/// of two, until pipe reaches ssthresh (the ninth ACK); then up to ssthresh. At once, nothing
/// goes out until pipe is below the new cwnd, then two per ACK.
#[test]
fn an_ecn_reduction_paced_by_prr_sends_in_proportion_not_after_a_pause() {
    assert_eq!(
        released_after_an_echo(EcnReduction::Prr),
        [1, 1, 1, 1, 1, 1, 1, 1, 0, 2]
    );
    assert_eq!(
        released_after_an_echo(EcnReduction::Immediate),
        [0, 0, 0, 0, 0, 2, 2, 2, 2, 2]
    );
}
