//! The peer wire's messages on a connection: sent, received and acted on (interest,
//! requests, blocks, completion, libtorrent's request queue); see the module above.

use super::*;

impl Swarm {
    /// Index of `p` in connection `c` (0: initiator).
    #[inline]
    pub(super) fn side_of(&self, p: u32, c: u32) -> usize {
        usize::from(self.ends[c as usize][0] != p)
    }

    /// Peer `p` writes `msg` to the other end of `c`: on the half where that end uploads
    /// (its control stream), or with `messages = "with_data"` in `p`'s own data stream. Either
    /// is sent with the event's other writes (libtorrent corks a handler's messages).
    pub(super) fn send(&mut self, net: &mut impl Network, p: u32, c: u32, msg: Msg) {
        let s = self.side_of(p, c);
        let bytes = msg.bytes(self.layout.pieces);
        let with_data = self.cfg.bittorrent.messages == Messages::WithData;
        let i = if with_data { s } else { 1 - s };
        let h = 2 * c + i as u32;
        let half = if with_data {
            net.data_half(h)
        } else {
            net.half(h)
        };
        let Some(half) = half else {
            return;
        };
        let wire = half.wire;
        if with_data {
            let sender = half.sender.expect("data_half makes the sender");
            sender.write(bytes);
            wire.data_written += bytes;
            wire.msgs_in_data.push(wire.data_written, msg);
            // A choked upload's buffers grow again: the next rechoke gives them back.
            let side = &mut self.conns[c as usize].sides[s];
            side.release_pending |= side.am_choking;
        } else {
            wire.ctrl_written += bytes;
            wire.msgs_written.push(wire.ctrl_written, msg);
        }
        let first = wire.ctrl_unflushed == 0;
        wire.ctrl_unflushed += bytes;
        if first {
            net.control_written(h);
        }
    }

    pub(super) fn send_bitfield(&mut self, net: &mut impl Network, p: u32, c: u32) {
        let s = self.side_of(p, c);
        self.conns[c as usize].sides[s].bitfield_sent = self.peers[p as usize].pieces.have.clone();
        self.send(net, p, c, Msg::Bitfield);
    }

    /// Peer `p` handles `msg` from the other end of `c`.
    pub(super) fn on_message(&mut self, net: &mut impl Network, p: u32, c: u32, msg: Msg) {
        if !self.conns[c as usize].open {
            return;
        }
        let s = self.side_of(p, c);
        match msg {
            Msg::Handshake => {
                self.conns[c as usize].sides[s].handshaken = true;
                if s == 1 {
                    self.send(net, p, c, Msg::Handshake);
                    self.send_bitfield(net, p, c);
                }
            }
            Msg::Bitfield => {
                let remote = self.conns[c as usize].sides[1 - s].bitfield_sent.clone();
                self.peers[p as usize].pieces.count_remote(&remote, true);
                let side = &mut self.conns[c as usize].sides[s];
                side.remote = remote;
                side.bitfield_known = true;
                self.update_interest(net, p, c);
            }
            Msg::Have(piece) => {
                let side = &mut self.conns[c as usize].sides[s];
                if side.remote.set(piece) && side.bitfield_known {
                    self.peers[p as usize].pieces.availability[piece as usize] += 1;
                }
                self.update_interest(net, p, c);
                self.fill_requests(net, p, c);
            }
            Msg::Interested => {
                self.conns[c as usize].sides[s].peer_interested = true;
                let slots = self.cfg.bittorrent.unchoke_slots as usize;
                if self.unchoked(p) < slots {
                    self.rechoke(net, p, false);
                }
            }
            Msg::NotInterested => {
                let side = &mut self.conns[c as usize].sides[s];
                side.peer_interested = false;
                if !side.am_choking {
                    self.rechoke(net, p, false);
                }
            }
            Msg::Choke => {
                // Blocks whose piece message the uploader already wrote still arrive; the
                // module likewise keeps the request being served (`delete_peer_from_list`).
                let in_transit: Vec<(u32, u32)> = net
                    .half(2 * c + 1 - s as u32)
                    .map(|h| h.wire.pieces_written.items().collect())
                    .unwrap_or_default();
                let side = &mut self.conns[c as usize].sides[s];
                side.peer_choking = true;
                let (coming, withdrawn): (Vec<_>, Vec<_>) = std::mem::take(&mut side.my_requests)
                    .into_iter()
                    .partition(|r| in_transit.contains(r));
                side.my_requests = coming;
                // libtorrent's incoming_choke drops the blocks not yet requested too.
                let mut withdrawn = withdrawn;
                withdrawn.extend(side.held_requests.drain(..));
                if !withdrawn.is_empty() {
                    for (piece, block) in withdrawn {
                        self.peers[p as usize].pieces.release(piece, block);
                    }
                    self.refill_all(net, p);
                }
            }
            Msg::Unchoke(n) => {
                let side = &mut self.conns[c as usize].sides[s];
                side.peer_choking = false;
                side.unchoke_got = n;
                side.last_block_ns = net.now();
                self.fill_requests(net, p, c);
            }
            Msg::Request(piece, block, n) => {
                let side = &mut self.conns[c as usize].sides[s];
                if !side.am_choking && n == side.unchokes_sent {
                    side.peer_requests.push_back((piece, block));
                    self.pump(net, 2 * c + s as u32);
                }
            }
            Msg::Cancel(piece, block) => {
                let side = &mut self.conns[c as usize].sides[s];
                side.peer_requests.retain(|&r| r != (piece, block));
            }
        }
    }

    pub(super) fn update_interest(&mut self, net: &mut impl Network, p: u32, c: u32) {
        let s = self.side_of(p, c);
        let side = &self.conns[c as usize].sides[s];
        let want = self.peers[p as usize].pieces.interested_in(&side.remote);
        if want != side.am_interested {
            self.conns[c as usize].sides[s].am_interested = want;
            let msg = if want {
                Msg::Interested
            } else {
                Msg::NotInterested
            };
            self.send(net, p, c, msg);
        }
    }

    /// Keep `pipeline` requests (or libtorrent's `desired_requests`) outstanding to the other
    /// end of `c`, if it unchoked us. With `whole_pieces_threshold`, a connection whose rate
    /// brings a piece within it is asked for whole pieces, up to that long of its rate in
    /// contiguous ones at a time, until the queue's target is reached or passed (libtorrent
    /// `request_a_block`: `prefer_contiguous_blocks`).
    pub(super) fn fill_requests(&mut self, net: &mut impl Network, p: u32, c: u32) {
        let s = self.side_of(p, c);
        let queue = self.conns[c as usize].sides[s].requests.as_ref();
        let pipeline = match queue {
            Some(queue) => queue.target() as usize,
            None => self.cfg.bittorrent.pipeline as usize,
        };
        let threshold_ns = self.cfg.bittorrent.whole_pieces_threshold_ns;
        let whole_pieces = match queue {
            // Validation allows a threshold only with libtorrent's picker and queue.
            Some(queue) if threshold_ns > 0 => {
                let window = ((queue.rate() as u128 * threshold_ns as u128 / 1_000_000_000) as u64)
                    .min(WHOLE_PIECES_MAX_BYTES);
                (window / self.layout.piece_bytes) as u32
            }
            _ => 0,
        };
        let end_game = self.cfg.bittorrent.end_game;
        let hold = self.cfg.bittorrent.hold_requests_beyond_target;
        loop {
            let conn = &mut self.conns[c as usize];
            let side = &mut conn.sides[s];
            if !conn.open || side.peer_choking || !side.am_interested {
                return;
            }
            if hold {
                // send_block_requests: request held blocks while fewer than the target are
                // out, skipping any that arrived meanwhile from another neighbour.
                let peer = &self.peers[p as usize];
                let mut now_requested = Vec::new();
                while side.my_requests.len() < pipeline {
                    let Some((piece, block)) = side.held_requests.pop_front() else {
                        break;
                    };
                    if peer.pieces.block(piece, block) != BlockState::Have {
                        side.my_requests.push((piece, block));
                        now_requested.push((piece, block));
                    }
                }
                let n = side.unchoke_got;
                let full = side.my_requests.len() + side.held_requests.len() >= pipeline;
                for (piece, block) in now_requested {
                    self.send(net, p, c, Msg::Request(piece, block, n));
                }
                if full {
                    return;
                }
            } else if side.my_requests.len() >= pipeline {
                return;
            }
            let conn = &mut self.conns[c as usize];
            let side = &mut conn.sides[s];
            let peer = &mut self.peers[p as usize];
            if whole_pieces > 0 {
                let floor = self
                    .log
                    .is_some()
                    .then(|| peer.pieces.choice_floor(&side.remote));
                let range = peer
                    .pieces
                    .pick_whole(&side.remote, whole_pieces, &mut peer.rng);
                if let Some(range) = range {
                    if let (Some(log), Some((started, rarest))) = (self.log.as_mut(), floor) {
                        for piece in range.clone() {
                            let at = (net.now(), p);
                            log.push(LogEntry::request(at, &peer.pieces, piece, started, rarest));
                        }
                    }
                    let n = side.unchoke_got;
                    let layout = self.layout;
                    let blocks: Vec<(u32, u32)> = range
                        .flat_map(|piece| (0..layout.blocks_in(piece)).map(move |b| (piece, b)))
                        .collect();
                    if hold {
                        side.held_requests.extend(blocks);
                        continue;
                    }
                    side.my_requests.extend_from_slice(&blocks);
                    for (piece, block) in blocks {
                        self.send(net, p, c, Msg::Request(piece, block, n));
                    }
                    continue;
                }
                // No piece is free whole: partial pieces' blocks, up to the target.
            }
            let connections = peer.conns.len();
            let mut picked = None;
            if let Some(log) = self.log.as_mut() {
                let (started, rarest) = peer.pieces.choice_floor(&side.remote);
                if let Some((piece, block)) =
                    peer.pieces.pick(&side.remote, connections, &mut peer.rng)
                {
                    let at = (net.now(), p);
                    log.push(LogEntry::request(at, &peer.pieces, piece, started, rarest));
                    picked = Some((piece, block));
                }
            } else {
                picked = peer.pieces.pick(&side.remote, connections, &mut peer.rng);
            }
            if picked.is_none() && end_game && peer.pieces.all_requested() {
                // End game: ask this peer too for a block requested elsewhere.
                picked = peer
                    .pieces
                    .requested_not_received(&side.remote)
                    .find(|r| !side.my_requests.contains(r) && !side.held_requests.contains(r));
            }
            let Some((piece, block)) = picked else {
                return;
            };
            if hold {
                side.held_requests.push_back((piece, block));
                continue;
            }
            side.my_requests.push((piece, block));
            let n = side.unchoke_got;
            self.send(net, p, c, Msg::Request(piece, block, n));
        }
    }

    pub(super) fn refill_all(&mut self, net: &mut impl Network, p: u32) {
        for c in self.peers[p as usize].conns.clone() {
            self.fill_requests(net, p, c);
        }
    }

    /// A whole block from the other end of `c` reached peer `p`.
    pub(super) fn on_block(
        &mut self,
        net: &mut impl Network,
        p: u32,
        c: u32,
        piece: u32,
        block: u32,
    ) {
        let s = self.side_of(p, c);
        let len = self.layout.block_len(piece, block);
        let now = net.now();
        let remote = self.ends[c as usize][1 - s];
        let conn = &mut self.conns[c as usize];
        conn.sides[s].my_requests.retain(|&r| r != (piece, block));
        conn.sides[s].recv_bytes += len;
        conn.sides[s].last_block_ns = now;
        if let Some(queue) = conn.sides[s].requests.as_mut() {
            queue.on_payload(len);
            queue.on_block();
        }
        conn.sides[1 - s].sent_bytes += len;
        self.peers[remote as usize].bytes_up += len;
        let peer = &mut self.peers[p as usize];
        peer.bytes_down += len;
        let before = peer.pieces.have.count();
        let had = peer.pieces.block(piece, block) == BlockState::Have;
        let completed = peer.pieces.receive(piece, block);
        if had {
            peer.duplicate_bytes += len;
        }
        debug_assert!(completed || peer.pieces.have.count() == before);
        if self.cfg.bittorrent.end_game {
            for other in self.peers[p as usize].conns.clone() {
                let so = self.side_of(p, other);
                let side = &mut self.conns[other as usize].sides[so];
                side.held_requests.retain(|&r| r != (piece, block));
                if other != c && side.my_requests.contains(&(piece, block)) {
                    side.my_requests.retain(|&r| r != (piece, block));
                    self.send(net, p, other, Msg::Cancel(piece, block));
                }
            }
        }
        if completed {
            for other in self.peers[p as usize].conns.clone() {
                let so = self.side_of(p, other);
                if self.conns[other as usize].sides[so].handshaken {
                    self.send(net, p, other, Msg::Have(piece));
                }
                self.update_interest(net, p, other);
            }
            if self.peers[p as usize].pieces.complete() {
                self.on_complete(net, p);
            }
        }
        self.fill_requests(net, p, c);
    }

    pub(super) fn on_complete(&mut self, net: &mut impl Network, p: u32) {
        self.completions += 1;
        let now = net.now();
        let stay_factor = self.cfg.stay_factor;
        let random_stay = self.cfg.seeding == Seeding::RandomStay;
        let peer = &mut self.peers[p as usize];
        peer.done_ns = Some(now);
        peer.rank = Some(self.completions);
        if random_stay {
            let download = (now - peer.arrival_ns) as f64;
            let stay = exponential(&mut self.rng, stay_factor * download);
            net.schedule(now.saturating_add(stay), Due::Leave(p));
        }
        if self
            .cfg
            .stop_after_completions
            .is_some_and(|n| self.completions >= n)
        {
            self.stopped = true;
        }
    }
}
