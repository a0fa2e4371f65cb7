//! For tests (this crate's and the recorder's in `slowstart_config`): a connection driven over
//! a pipe with a fixed one-way delay and no rate limit, the way every driver drives it, with
//! each sender event reported to an observer ([`crate::SenderEnd::notify`]).

use slowstart_cc::{CcSpec, CommonParams, Controller};

use crate::observe::{Observer, SenderEvent};
use crate::packet::{Kind, Packet};
use crate::sender::State;
use crate::{Connection, Io, Received, Settings, TimerKind};

/// Flow 0's connection under `settings`, run by the built-in `cc` with an initial window of
/// `initcwnd` segments, its sender given `size` bytes to send and close.
pub fn connection(cc: &str, initcwnd: u64, settings: &Settings, size: u64) -> Connection {
    let common = CommonParams {
        mss: settings.mss,
        initcwnd,
        abc: true,
        seed: 1,
        paced: false,
    };
    let cc = Controller::new(&CcSpec::named(cc), &common).expect("a built-in");
    let mut conn = Connection::new(0, settings, settings, cc, Some(size));
    conn.src.sender.write(size);
    conn.src.sender.close();
    conn
}

/// Run `conn` from `start_ns` (no handshake) until its sender is done, over a pipe of `one_way_ns`
/// each way that drops the data packets numbered in `drop` (0: the first data packet sent,
/// retransmissions counted); `obs` hears every sender event, and the packets the sender's end
/// sends and receives. Panics on a stall or after a minute.
pub fn transfer(
    conn: &mut Connection,
    start_ns: u64,
    one_way_ns: u64,
    drop: &[u64],
    obs: &mut impl Observer,
) {
    let mut io = Io::default();
    // (arrival, order sent, packet)
    let mut pipe: Vec<(u64, u64, Packet)> = Vec::new();
    let (mut sent, mut data_sent) = (0u64, 0u64);
    let mut take = |now: u64, io: &mut Io, pipe: &mut Vec<(u64, u64, Packet)>, obs: &mut _| {
        for p in io.packets.drain(..) {
            if p.to_receiver() {
                Observer::on_packet_sent(obs, now, &p);
            }
            sent += 1;
            if p.kind == Kind::Data {
                data_sent += 1;
                if drop.contains(&(data_sent - 1)) {
                    continue;
                }
            }
            pipe.push((now + one_way_ns, sent, p));
        }
    };
    let mut now = start_ns;
    conn.src.sender.start(now, false, &mut io);
    conn.src.notify(now, SenderEvent::Start, obs);
    take(now, &mut io, &mut pipe, obs);
    while conn.src.sender.state() != State::Done {
        let arrival = (0..pipe.len()).min_by_key(|&i| (pipe[i].0, pipe[i].1));
        match (arrival, conn.poll_timeout()) {
            (Some(i), t) if t.is_none_or(|t| pipe[i].0 <= t) => {
                let (at, _, p) = pipe.swap_remove(i);
                now = at;
                if !p.to_receiver() {
                    obs.on_packet_received(now, &p);
                }
                if let Received::Ack(outcome) = conn.handle_packet(now, &p, &mut io) {
                    conn.src.notify(now, SenderEvent::Ack(outcome), obs);
                }
            }
            (_, Some(t)) => {
                now = t;
                let mut rto = false;
                conn.handle_timeouts(now, &mut io, |f| rto |= f.kind == TimerKind::Retransmission);
                if rto {
                    conn.src.notify(now, SenderEvent::Rto, obs);
                }
            }
            _ => panic!("stalled at {now}"),
        }
        take(now, &mut io, &mut pipe, obs);
        assert!(now - start_ns < 60_000_000_000, "not done in a minute");
    }
}
