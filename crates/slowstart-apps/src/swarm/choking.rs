//! Who gets an upload slot, as BitTorrent 4's `Choker` decides it ([`super::choker`]):
//! the periodic rechoke, the one at once when a slot frees, the optimistic unchoke.

use super::*;

impl Swarm {
    pub(super) fn unchoked(&self, p: u32) -> usize {
        self.peers[p as usize]
            .conns
            .iter()
            .filter(|&&c| !self.conns[c as usize].sides[self.side_of(p, c)].am_choking)
            .count()
    }

    pub(super) fn periodic_rechoke(&mut self, net: &mut impl Network, p: u32) {
        if !self.peers[p as usize].active {
            return;
        }
        let bt = &self.cfg.bittorrent;
        let keep = (bt.rate_window_ns / bt.rechoke_ns.max(1)).max(1) as usize;
        let next = net.now().saturating_add(bt.rechoke_ns);
        for c in self.peers[p as usize].conns.clone() {
            let s = self.side_of(p, c);
            let side = &mut self.conns[c as usize].sides[s];
            side.window.push((side.sent_bytes, side.recv_bytes));
            if side.window.len() > keep + 1 {
                side.window.remove(0);
            }
        }
        self.peers[p as usize].rechokes += 1;
        self.rechoke(net, p, true);
        self.release_empty_buffers(net, p);
        net.schedule(next, Due::Rechoke(p));
    }

    /// libtorrent's once-a-second tick of each of peer `p`'s connections (its session's,
    /// from its start: [`RequestQueue::on_tick`]); a deeper queue is filled at once, and with
    /// `send_buffer = "libtorrent"` each upload's watermark follows its last second.
    pub(super) fn request_tick(&mut self, net: &mut impl Network, p: u32) {
        if !self.peers[p as usize].active {
            return;
        }
        let queues = self.cfg.bittorrent.request_queue_time_ns > 0;
        for c in self.peers[p as usize].conns.clone() {
            let s = self.side_of(p, c);
            if self.cfg.bittorrent.send_buffer == SendBuffer::Libtorrent {
                if let Some(half) = net.half(2 * c + s as u32) {
                    let wire = half.wire;
                    let unsent = half.sender.map_or(0, |s| s.unsent_bytes());
                    let sent = wire.data_written - unsent;
                    wire.uploaded_last_second = sent - wire.sent_at_tick;
                    wire.sent_at_tick = sent;
                }
                self.pump(net, 2 * c + s as u32);
            }
            if !queues {
                continue;
            }
            if let Some(queue) = self.conns[c as usize].sides[s].requests.as_mut() {
                queue.on_tick(TICK_NS);
            }
        }
        net.schedule(net.now() + TICK_NS, Due::RequestTick(p));
        if queues {
            self.refill_all(net, p);
        }
    }

    /// A new side's request queue: libtorrent's with `request_queue_time`, else none (the
    /// fixed `pipeline`).
    pub(super) fn request_queue(&self) -> Option<RequestQueue> {
        let queue_time_ns = self.cfg.bittorrent.request_queue_time_ns;
        (queue_time_ns > 0).then(|| {
            RequestQueue::new(&BittorrentConfig {
                block_bytes: self.cfg.block_bytes,
                queue_time_ns,
                ..BittorrentConfig::libtorrent_2()
            })
        })
    }

    pub(super) fn rechoke(&mut self, net: &mut impl Network, p: u32, periodic: bool) {
        let bt = &self.cfg.bittorrent;
        let seed = self.peers[p as usize].pieces.complete();
        let now = net.now();
        let cands: Vec<Candidate> = self.peers[p as usize]
            .conns
            .iter()
            .filter_map(|&c| {
                let side = &self.conns[c as usize].sides[self.side_of(p, c)];
                if !side.handshaken {
                    return None;
                }
                let (sent0, recv0) = side.window.first().copied().unwrap_or((0, 0));
                Some(Candidate {
                    conn: c,
                    interested: side.peer_interested,
                    rate: if seed {
                        side.sent_bytes - sent0
                    } else {
                        side.recv_bytes - recv0
                    },
                    snubbed: bt.anti_snubbing
                        && !side.peer_choking
                        && now.saturating_sub(side.last_block_ns) >= bt.snub_ns,
                    weight: if side.drawn_optimistic {
                        1
                    } else {
                        bt.new_peer_weight
                    },
                })
            })
            .collect();
        let every = (bt.optimistic_ns / bt.rechoke_ns.max(1)).max(1);
        let peer = &mut self.peers[p as usize];
        let redraw = periodic && peer.rechokes.is_multiple_of(every);
        let choice = choker::rechoke(
            &cands,
            bt.unchoke_slots as usize,
            peer.optimistic,
            redraw,
            &mut peer.rng,
        );
        if let Some(o) = choice.optimistic {
            if peer.optimistic != Some(o) {
                let so = self.side_of(p, o);
                self.conns[o as usize].sides[so].drawn_optimistic = true;
            }
        }
        self.peers[p as usize].optimistic = choice.optimistic;
        // Chokes first, so that no more than the slots are ever unchoked.
        let conns = self.peers[p as usize].conns.clone();
        let (stay, open): (Vec<u32>, Vec<u32>) =
            conns.into_iter().partition(|c| !choice.unchoke.contains(c));
        for c in stay.into_iter().chain(open) {
            let s = self.side_of(p, c);
            let side = &mut self.conns[c as usize].sides[s];
            let unchoke = choice.unchoke.contains(&c);
            if unchoke != side.am_choking {
                continue;
            }
            side.am_choking = !unchoke;
            side.release_pending = !unchoke;
            // Requests that came before this (un)choke are void.
            side.peer_requests.clear();
            let msg = if unchoke {
                side.unchokes_sent += 1;
                Msg::Unchoke(side.unchokes_sent)
            } else {
                Msg::Choke
            };
            if let Some(log) = self.log.as_mut() {
                log.push(LogEntry::Choke {
                    t_ns: now,
                    peer: p,
                    conn: c,
                    unchoked: unchoke,
                });
            }
            self.send(net, p, c, msg);
        }
    }
}
