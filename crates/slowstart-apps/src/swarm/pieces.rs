//! What a peer has and what it asks for next: the file in pieces and blocks, and piece
//! selection, either the ns-2 module's (Eger et al., `bittorrent_app.cc` `chunk_selection`):
//! finish a piece already partly requested, a random piece until the first one completes, then
//! rarest first among the neighbours' bitfields with random ties; or libtorrent 2.0's
//! (`piece_picker.cpp`, [`PiecePicker::Libtorrent`]), where rarity comes before finishing a
//! partial piece. Sans-IO: the caller passes the remote's pieces and a random generator.

use rand::Rng;
use slowstart_config::PiecePicker;

/// libtorrent's `initial_picker_threshold` (settings_pack, 4): random pieces until this many
/// are held.
pub const INITIAL_PICKER_THRESHOLD: u32 = 4;
/// libtorrent's cap on the bytes a whole-piece pick covers (`request_a_block`: 8 MiB).
pub const WHOLE_PIECES_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// The file's shape: `pieces` pieces of `blocks_per_piece` blocks; the last piece and its last
/// block may be shorter. Built by [`Layout::new`], which counts the blocks once: piece selection
/// asks for them at every piece it looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub file_bytes: u64,
    pub piece_bytes: u64,
    pub block_bytes: u64,
    pub pieces: u32,
    /// Blocks in every piece but the last, and in the last.
    blocks_full: u32,
    blocks_last: u32,
}

impl Layout {
    pub fn new(file_bytes: u64, piece_bytes: u64, block_bytes: u64) -> Self {
        let pieces = file_bytes.div_ceil(piece_bytes) as u32;
        let last_len = file_bytes - (pieces.saturating_sub(1) as u64) * piece_bytes;
        Layout {
            file_bytes,
            piece_bytes,
            block_bytes,
            pieces,
            blocks_full: piece_bytes.div_ceil(block_bytes) as u32,
            blocks_last: last_len.div_ceil(block_bytes) as u32,
        }
    }

    pub fn piece_len(&self, piece: u32) -> u64 {
        let start = piece as u64 * self.piece_bytes;
        self.piece_bytes.min(self.file_bytes - start)
    }

    #[inline]
    pub fn blocks_in(&self, piece: u32) -> u32 {
        debug_assert!(piece < self.pieces, "piece {piece} of {}", self.pieces);
        if piece + 1 == self.pieces {
            self.blocks_last
        } else {
            self.blocks_full
        }
    }

    #[inline]
    pub fn block_len(&self, piece: u32, block: u32) -> u64 {
        let start = block as u64 * self.block_bytes;
        self.block_bytes.min(self.piece_len(piece) - start)
    }

    /// Index of `(piece, block)` in a whole-file block array.
    pub fn block_index(&self, piece: u32, block: u32) -> usize {
        piece as usize * self.blocks_full as usize + block as usize
    }

    pub fn blocks_per_piece(&self) -> u32 {
        self.blocks_full
    }
}

/// A set of pieces (a BitTorrent bitfield).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bitfield {
    words: Vec<u64>,
    count: u32,
}

impl Bitfield {
    pub fn empty(pieces: u32) -> Self {
        Bitfield {
            words: vec![0; (pieces as usize).div_ceil(64)],
            count: 0,
        }
    }

    pub fn full(pieces: u32) -> Self {
        let mut b = Self::empty(pieces);
        for p in 0..pieces {
            b.set(p);
        }
        b
    }

    pub fn has(&self, p: u32) -> bool {
        self.words[p as usize / 64] >> (p % 64) & 1 == 1
    }

    /// Add piece `p`; true if it was new.
    pub fn set(&mut self, p: u32) -> bool {
        let w = &mut self.words[p as usize / 64];
        let bit = 1u64 << (p % 64);
        if *w & bit != 0 {
            return false;
        }
        *w |= bit;
        self.count += 1;
        true
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// Pieces set, in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                Some(i as u32 * 64 + b)
            })
        })
    }

    /// Whether `self` has a piece `other` lacks.
    pub fn has_any_missing_from(&self, other: &Bitfield) -> bool {
        self.words
            .iter()
            .zip(&other.words)
            .any(|(&a, &b)| a & !b != 0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BlockState {
    Needed,
    Requested,
    Have,
}

/// A downloader's view of its own file: which blocks it has, which are requested, how many
/// neighbours have each piece.
#[derive(Clone, Debug)]
pub struct Pieces {
    pub layout: Layout,
    pub have: Bitfield,
    blocks: Vec<BlockState>,
    /// Blocks requested or received, per piece (the module's `requested[]`, in blocks).
    taken: Vec<u32>,
    /// Blocks received, per piece.
    got: Vec<u32>,
    /// Neighbours whose bitfield has the piece (the module's `occurrence`).
    pub availability: Vec<u32>,
    picker: PiecePicker,
}

impl Pieces {
    pub fn new(layout: Layout, complete: bool, picker: PiecePicker) -> Self {
        let n = layout.pieces;
        let total = layout.block_index(n - 1, layout.blocks_in(n - 1));
        let state = if complete {
            BlockState::Have
        } else {
            BlockState::Needed
        };
        let taken: Vec<u32> = (0..n)
            .map(|p| if complete { layout.blocks_in(p) } else { 0 })
            .collect();
        Pieces {
            layout,
            have: if complete {
                Bitfield::full(n)
            } else {
                Bitfield::empty(n)
            },
            blocks: vec![state; total],
            got: taken.clone(),
            taken,
            availability: vec![0; n as usize],
            picker,
        }
    }

    /// Free the per-block and per-piece state of a peer that left, which had every piece
    /// (a peer leaves only once complete): `have` stays, so [`Pieces::complete`] still holds.
    /// Nothing may read the rest afterwards.
    pub fn release_when_gone(&mut self) {
        debug_assert!(self.complete());
        self.blocks = Vec::new();
        self.taken = Vec::new();
        self.got = Vec::new();
        self.availability = Vec::new();
    }

    pub fn complete(&self) -> bool {
        self.have.count() == self.layout.pieces
    }

    pub fn block(&self, piece: u32, block: u32) -> BlockState {
        self.blocks[self.layout.block_index(piece, block)]
    }

    /// Whether `remote` has a piece we still need.
    pub fn interested_in(&self, remote: &Bitfield) -> bool {
        remote.has_any_missing_from(&self.have)
    }

    /// Piece `p` still has blocks nobody was asked for.
    fn open(&self, p: u32) -> bool {
        self.taken[p as usize] < self.layout.blocks_in(p)
    }

    fn candidate(&self, remote: &Bitfield, p: u32) -> bool {
        remote.has(p) && !self.have.has(p) && self.open(p)
    }

    /// The lowest-numbered piece partly requested that `remote` can complete.
    fn started(&self, remote: &Bitfield) -> Option<u32> {
        // Only the pieces `remote` has and we lack, a word at a time.
        let words = remote.words.iter().zip(&self.have.words);
        for (i, (&theirs, &ours)) in words.enumerate() {
            let mut w = theirs & !ours;
            while w != 0 {
                let p = i as u32 * 64 + w.trailing_zeros();
                if self.taken[p as usize] > 0 && self.open(p) {
                    return Some(p);
                }
                w &= w - 1;
            }
        }
        None
    }

    /// What [`Pieces::pick`] would weigh for `remote`: whether a started piece comes first, and
    /// the least availability among the pieces it could begin afresh.
    pub fn choice_floor(&self, remote: &Bitfield) -> (bool, Option<u32>) {
        let rarest = remote
            .iter()
            .filter(|&p| self.taken[p as usize] == 0 && self.candidate(remote, p))
            .map(|p| self.availability[p as usize])
            .min();
        (self.started(remote).is_some(), rarest)
    }

    /// The next block to request from a peer holding `remote`, marked requested; `None` when
    /// that peer has nothing we need that is not already asked for. `connections`: the
    /// downloader's, which bound its partial pieces ([`PiecePicker::Libtorrent`]).
    pub fn pick(
        &mut self,
        remote: &Bitfield,
        connections: usize,
        rng: &mut impl Rng,
    ) -> Option<(u32, u32)> {
        let piece = match self.picker {
            PiecePicker::Module => self.pick_module(remote, rng)?,
            PiecePicker::Libtorrent => self.pick_libtorrent(remote, connections, rng)?,
        };
        let block = (0..self.layout.blocks_in(piece))
            .find(|&b| self.block(piece, b) == BlockState::Needed)
            .expect("an open piece has a needed block");
        let i = self.layout.block_index(piece, block);
        self.blocks[i] = BlockState::Requested;
        self.taken[piece as usize] += 1;
        Some((piece, block))
    }

    /// libtorrent 2.0's choice (`piece_picker::pick_pieces`, `peer_connection::picker_options`,
    /// default settings): below `initial_picker_threshold` pieces, a partial piece (lowest
    /// index) or else a random one; above it rarest first, where a partial piece's priority is
    /// one better than a fresh piece's of the same availability (`piece_pos::priority`:
    /// adjustment -3 against -2), so a partial piece that is more common waits; only with more
    /// partial pieces than 1.5 per connection do partial pieces come first (`partial_ratio`),
    /// the rarest of them, then the one closest to complete. Whole pieces from fast
    /// connections are [`Pieces::pick_whole`]; piece extents (off by default) are not
    /// modelled.
    fn pick_libtorrent(
        &self,
        remote: &Bitfield,
        connections: usize,
        rng: &mut impl Rng,
    ) -> Option<u32> {
        let cands: Vec<u32> = remote
            .iter()
            .filter(|&p| self.candidate(remote, p))
            .collect();
        if cands.is_empty() {
            return None;
        }
        let partial = |p: u32| self.taken[p as usize] > 0;
        if self.have.count() < INITIAL_PICKER_THRESHOLD {
            return Some(match cands.iter().copied().find(|&p| partial(p)) {
                Some(p) => p,
                None => cands[rng.random_range(0..cands.len())],
            });
        }
        let partials = (0..self.layout.pieces)
            .filter(|&p| partial(p) && self.open(p) && !self.have.has(p))
            .count();
        if partials > connections * 3 / 2 {
            let closest = cands
                .iter()
                .copied()
                .filter(|&p| partial(p))
                .min_by_key(|&p| {
                    (
                        self.availability[p as usize],
                        std::cmp::Reverse(self.taken[p as usize]),
                    )
                });
            if closest.is_some() {
                return closest;
            }
        }
        // Priority: availability first, then partial before fresh; random among equals.
        let rank = |p: u32| (self.availability[p as usize], !partial(p));
        let best = cands.iter().map(|&p| rank(p)).min().expect("not empty");
        let ties: Vec<u32> = cands.into_iter().filter(|&p| rank(p) == best).collect();
        Some(ties[rng.random_range(0..ties.len())])
    }

    /// libtorrent's whole-piece pick (`prefer_contiguous_blocks`: `add_blocks`,
    /// `expand_piece`): the piece that [`Pieces::pick`] would rank first among those nobody
    /// was asked a block of (partial pieces are only backups, `add_blocks_downloading`),
    /// widened to up to `whole` contiguous pieces that are as free and that `remote` has,
    /// every block of them marked requested; `None` when there is none. Only for
    /// [`PiecePicker::Libtorrent`].
    pub fn pick_whole(
        &mut self,
        remote: &Bitfield,
        whole: u32,
        rng: &mut impl Rng,
    ) -> Option<std::ops::Range<u32>> {
        debug_assert_eq!(self.picker, PiecePicker::Libtorrent);
        let free = |s: &Self, p: u32| s.taken[p as usize] == 0 && s.candidate(remote, p);
        let fresh: Vec<u32> = remote.iter().filter(|&p| free(self, p)).collect();
        if fresh.is_empty() {
            return None;
        }
        let piece = if self.have.count() < INITIAL_PICKER_THRESHOLD {
            fresh[rng.random_range(0..fresh.len())]
        } else {
            self.rarest(fresh, rng)
        };
        // expand_piece without align_expanded_pieces: down to piece - whole + 1, then up to
        // start + whole, while the pieces can be picked.
        let whole = whole.max(1);
        let lower = (piece + 1).saturating_sub(whole);
        let mut start = piece;
        while start > lower && free(self, start - 1) {
            start -= 1;
        }
        let upper = (start + whole).min(self.layout.pieces);
        let mut end = piece + 1;
        while end < upper && free(self, end) {
            end += 1;
        }
        for p in start..end {
            for b in 0..self.layout.blocks_in(p) {
                let i = self.layout.block_index(p, b);
                debug_assert_eq!(self.blocks[i], BlockState::Needed);
                self.blocks[i] = BlockState::Requested;
            }
            self.taken[p as usize] = self.layout.blocks_in(p);
        }
        Some(start..end)
    }

    /// Of `fresh` (not empty), a piece the fewest neighbours have, at random among those.
    fn rarest(&self, fresh: Vec<u32>, rng: &mut impl Rng) -> u32 {
        let fewest = fresh
            .iter()
            .map(|&p| self.availability[p as usize])
            .min()
            .expect("not empty");
        let ties: Vec<u32> = fresh
            .into_iter()
            .filter(|&p| self.availability[p as usize] == fewest)
            .collect();
        ties[rng.random_range(0..ties.len())]
    }

    /// The ns-2 module's choice (`chunk_selection`). Of several partly requested pieces its
    /// loop keeps the highest-numbered (its `requested_bytes` is declared inside the loop, so
    /// every partial piece passes the test); this takes the lowest. Either is strict priority.
    fn pick_module(&self, remote: &Bitfield, rng: &mut impl Rng) -> Option<u32> {
        let candidate = |s: &Self, p: u32| s.candidate(remote, p);
        // 1. Finish what was started: the lowest-numbered piece partly requested.
        let started = self.started(remote);
        let piece = match started {
            Some(p) => p,
            None => {
                let fresh: Vec<u32> = remote.iter().filter(|&p| candidate(self, p)).collect();
                if fresh.is_empty() {
                    return None;
                }
                if self.have.count() == 0 {
                    // 2. Random first piece: any piece complete soonest is worth trading.
                    fresh[rng.random_range(0..fresh.len())]
                } else {
                    // 3. Rarest first among the neighbours.
                    self.rarest(fresh, rng)
                }
            }
        };
        Some(piece)
    }

    /// A request was withdrawn (choke, closed connection): the block is needed again.
    pub fn release(&mut self, piece: u32, block: u32) {
        let i = self.layout.block_index(piece, block);
        if self.blocks[i] == BlockState::Requested {
            self.blocks[i] = BlockState::Needed;
            self.taken[piece as usize] -= 1;
        }
    }

    /// A block arrived; returns true when it completed its piece. A block already held (end
    /// game) changes nothing.
    pub fn receive(&mut self, piece: u32, block: u32) -> bool {
        let i = self.layout.block_index(piece, block);
        match self.blocks[i] {
            BlockState::Have => return false,
            BlockState::Needed => self.taken[piece as usize] += 1,
            BlockState::Requested => {}
        }
        self.blocks[i] = BlockState::Have;
        self.got[piece as usize] += 1;
        if self.got[piece as usize] == self.layout.blocks_in(piece) {
            self.have.set(piece);
            return true;
        }
        false
    }

    /// Every block still missing is requested somewhere (end game may begin).
    pub fn all_requested(&self) -> bool {
        (0..self.layout.pieces).all(|p| !self.open(p))
    }

    /// Blocks requested but not received that `remote` has (end-game candidates).
    pub fn requested_not_received<'a>(
        &'a self,
        remote: &'a Bitfield,
    ) -> impl Iterator<Item = (u32, u32)> + 'a {
        (0..self.layout.pieces)
            .filter(move |&p| remote.has(p) && !self.have.has(p))
            .flat_map(move |p| {
                (0..self.layout.blocks_in(p))
                    .filter(move |&b| self.block(p, b) == BlockState::Requested)
                    .map(move |b| (p, b))
            })
    }

    /// A neighbour's bitfield joins (`+1`) or leaves (`-1`) the availability counts.
    pub fn count_remote(&mut self, remote: &Bitfield, joins: bool) {
        for p in remote.iter() {
            let a = &mut self.availability[p as usize];
            if joins {
                *a += 1;
            } else {
                *a -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn layout() -> Layout {
        // 4 pieces of 4 blocks; the last piece has 2 blocks, its last block 10 bytes.
        Layout::new(3 * 64 + 16 + 10, 64, 16)
    }

    #[test]
    fn layout_counts_short_last_piece_and_block() {
        let l = layout();
        assert_eq!(l.pieces, 4);
        assert_eq!(l.blocks_in(0), 4);
        assert_eq!(l.blocks_in(3), 2);
        assert_eq!(l.piece_len(3), 26);
        assert_eq!(l.block_len(3, 1), 10);
        let total: u64 = (0..4)
            .flat_map(|p| (0..l.blocks_in(p)).map(move |b| (p, b)))
            .map(|(p, b)| l.block_len(p, b))
            .sum();
        assert_eq!(total, l.file_bytes);
    }

    #[test]
    fn bitfield_iterates_and_counts() {
        let mut b = Bitfield::empty(130);
        assert!(b.set(3));
        assert!(b.set(129));
        assert!(!b.set(3));
        assert_eq!(b.count(), 2);
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![3, 129]);
        assert!(b.has_any_missing_from(&Bitfield::empty(130)));
        assert!(!b.has_any_missing_from(&Bitfield::full(130)));
    }

    #[test]
    fn a_started_piece_is_finished_before_another_is_begun() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut me = Pieces::new(layout(), false, PiecePicker::Module);
        let seed = Bitfield::full(4);
        let (p, b) = me.pick(&seed, 1, &mut rng).unwrap();
        assert_eq!(b, 0);
        for k in 1..me.layout.blocks_in(p) {
            assert_eq!(
                me.pick(&seed, 1, &mut rng),
                Some((p, k)),
                "same piece, next block"
            );
        }
        let (q, _) = me.pick(&seed, 1, &mut rng).unwrap();
        assert_ne!(
            q, p,
            "the first piece is all requested, so a new one starts"
        );
    }

    #[test]
    fn rarest_first_after_the_first_piece() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut me = Pieces::new(layout(), false, PiecePicker::Module);
        // Complete piece 0 (the random first piece, whatever it was, is now done).
        for b in 0..4 {
            me.receive(0, b);
        }
        assert!(me.have.has(0));
        me.availability = vec![5, 3, 1, 3];
        let seed = Bitfield::full(4);
        assert_eq!(
            me.pick(&seed, 1, &mut rng),
            Some((2, 0)),
            "piece 2 is the rarest"
        );
        // Piece 2 is now started: it is finished first whatever the counts say.
        me.availability = vec![5, 0, 9, 0];
        assert_eq!(me.pick(&seed, 1, &mut rng), Some((2, 1)));
    }

    #[test]
    fn libtorrent_puts_rarity_before_a_partial_piece() {
        // 8 pieces of 4 blocks; 4 held (initial_picker_threshold), so rarest first applies.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut me = Pieces::new(Layout::new(8 * 64, 64, 16), false, PiecePicker::Libtorrent);
        for p in 4..8 {
            for b in 0..4 {
                me.receive(p, b);
            }
        }
        let seed = Bitfield::full(8);
        // Piece 1 partly requested (from another neighbour, say) and held by 3 neighbours;
        // piece 2 only by the seed.
        me.availability = vec![3, 3, 1, 3, 9, 9, 9, 9];
        me.blocks[me.layout.block_index(1, 0)] = BlockState::Requested;
        me.taken[1] = 1;
        assert_eq!(
            me.pick(&seed, 8, &mut rng),
            Some((2, 0)),
            "the rarer fresh piece"
        );
        // The module finishes piece 1 first, whatever the counts say.
        let mut module = me.clone();
        module.picker = PiecePicker::Module;
        assert_eq!(module.pick(&seed, 8, &mut rng), Some((1, 1)));
        // Equally rare: the partial piece comes first (priority adjustment -3 against -2),
        // here piece 2, which the first pick began.
        me.availability = vec![3, 3, 3, 3, 9, 9, 9, 9];
        assert_eq!(me.pick(&seed, 8, &mut rng).map(|(p, _)| p), Some(2));
        // More partial pieces (1 and 2) than 1.5 per connection (1 here): the partial ones
        // come first, the rarest of them, though piece 0 is rarer still.
        me.availability = vec![1, 5, 4, 3, 9, 9, 9, 9];
        assert_eq!(me.pick(&seed, 1, &mut rng).map(|(p, _)| p), Some(2));
        // Two partial pieces among 8 connections are few: rarest first.
        assert_eq!(me.pick(&seed, 8, &mut rng), Some((0, 0)));
    }

    #[test]
    fn libtorrent_picks_at_random_partial_pieces_first_until_four_are_held() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
        let mut me = Pieces::new(Layout::new(64 * 64, 64, 16), false, PiecePicker::Libtorrent);
        let seed = Bitfield::full(64);
        // Availability says piece 63 is the rarest; below 4 pieces it does not count.
        me.availability = vec![5; 64];
        me.availability[63] = 1;
        let (first, _) = me.pick(&seed, 1, &mut rng).unwrap();
        // The partial piece's blocks come next, one after the other.
        for b in 1..4 {
            assert_eq!(me.pick(&seed, 1, &mut rng), Some((first, b)));
        }
        let firsts: Vec<u32> = (0..30)
            .map(|_| {
                let mut fresh =
                    Pieces::new(Layout::new(64 * 64, 64, 16), false, PiecePicker::Libtorrent);
                fresh.availability = me.availability.clone();
                fresh.pick(&seed, 1, &mut rng).unwrap().0
            })
            .collect();
        assert!(
            firsts.iter().filter(|&&p| p == 63).count() < 5,
            "{firsts:?}"
        );
        // With 4 pieces held, the rarest.
        for p in 0..4 {
            for b in 0..4 {
                me.receive(p, b);
            }
        }
        me.receive(first, 0);
        for b in 0..4 {
            me.receive(first, b);
        }
        let held = me.have.count();
        assert!(held >= 4, "{held}");
        assert_eq!(me.pick(&seed, 1, &mut rng), Some((63, 0)));
    }

    #[test]
    fn a_whole_pick_widens_to_contiguous_free_pieces_the_remote_has() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
        let layout = Layout::new(10 * 64, 64, 16);
        let mut me = Pieces::new(layout, false, PiecePicker::Libtorrent);
        for p in [0, 8, 9, 7] {
            for b in 0..4 {
                me.receive(p, b);
            }
        }
        let mut remote = Bitfield::empty(10);
        for p in [1, 2, 3, 4, 6] {
            remote.set(p);
        }
        // Piece 3 is the rarest; piece 1 is partly requested, so not free.
        me.availability = vec![9, 9, 9, 1, 9, 9, 9, 9, 9, 9];
        me.blocks[layout.block_index(1, 0)] = BlockState::Requested;
        me.taken[1] = 1;
        // Three pieces: down from 3 to 2 (1 is not free), up from there to 4 (2 + 3 = 5).
        assert_eq!(me.pick_whole(&remote, 3, &mut rng), Some(2..5));
        assert!((2..5).all(|p| (0..4).all(|b| me.block(p, b) == BlockState::Requested)));
        // What is left whole: 6 (5 is not the remote's); then nothing.
        assert_eq!(me.pick_whole(&remote, 3, &mut rng), Some(6..7));
        assert_eq!(me.pick_whole(&remote, 3, &mut rng), None);
        // The partial piece is still there for a block-by-block pick.
        assert_eq!(me.pick(&remote, 1, &mut rng), Some((1, 1)));
    }

    #[test]
    fn released_blocks_are_asked_for_again_and_duplicates_change_nothing() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut me = Pieces::new(layout(), false, PiecePicker::Module);
        let mut only3 = Bitfield::empty(4);
        only3.set(3);
        assert_eq!(me.pick(&only3, 1, &mut rng), Some((3, 0)));
        assert_eq!(me.pick(&only3, 1, &mut rng), Some((3, 1)));
        assert_eq!(
            me.pick(&only3, 1, &mut rng),
            None,
            "piece 3 is all requested"
        );
        assert!(me.requested_not_received(&only3).eq([(3, 0), (3, 1)]));
        me.release(3, 1);
        assert_eq!(me.pick(&only3, 1, &mut rng), Some((3, 1)));
        assert!(!me.receive(3, 0));
        assert!(!me.receive(3, 0), "a duplicate block");
        assert!(me.receive(3, 1), "completes piece 3");
        assert!(me.have.has(3));
        assert_eq!(me.pick(&only3, 1, &mut rng), None);
    }
}
