//! The payload every sender writes: byte `i` of the stream is a function of `i` alone, so the
//! receiver can check every byte it is handed without keeping a copy.

/// Byte `offset` of the stream (251 is prime: the pattern does not repeat at any power of two).
pub fn byte_at(offset: u64) -> u8 {
    (offset % 251) as u8
}

/// Fill `buf` with the stream's bytes from `offset`.
pub fn fill(offset: u64, buf: &mut [u8]) {
    let mut v = (offset % 251) as u8;
    for b in buf {
        *b = v;
        v = if v == 250 { 0 } else { v + 1 };
    }
}

/// The first offset in `buf` (holding the stream from `offset`) that is not the pattern.
pub fn first_mismatch(offset: u64, buf: &[u8]) -> Option<u64> {
    let mut v = (offset % 251) as u8;
    for (i, &b) in buf.iter().enumerate() {
        if b != v {
            return Some(offset + i as u64);
        }
        v = if v == 250 { 0 } else { v + 1 };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_and_check_agree_with_byte_at() {
        let mut buf = vec![0; 600];
        fill(1_000_000_007, &mut buf);
        for (i, &b) in buf.iter().enumerate() {
            assert_eq!(b, byte_at(1_000_000_007 + i as u64));
        }
        assert_eq!(first_mismatch(1_000_000_007, &buf), None);
        buf[300] ^= 1;
        assert_eq!(first_mismatch(1_000_000_007, &buf), Some(1_000_000_307));
    }
}
