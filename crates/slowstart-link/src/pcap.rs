//! A classic pcap file (the libpcap format, nanosecond timestamps) of raw IPv4 packets
//! (LINKTYPE_RAW = 101), written as packets come: nothing is held beyond the write buffer.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

/// Largest IPv4 packet, and so the snapshot length the file header announces.
const SNAPLEN: u32 = 65_535;

pub struct PcapFile {
    path: PathBuf,
    writer: PcapWriter<BufWriter<File>>,
}

impl PcapFile {
    /// Create (or truncate) `path` and write the file header. Little-endian whatever the
    /// machine, so the same run gives the same bytes everywhere.
    pub fn create(path: &Path) -> Result<Self, String> {
        let file =
            File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let header = PcapHeader {
            snaplen: SNAPLEN,
            datalink: DataLink::RAW,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
            ..Default::default()
        };
        let writer = PcapWriter::with_header(BufWriter::with_capacity(1 << 16, file), header)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(PcapFile {
            path: path.to_path_buf(),
            writer,
        })
    }

    /// One packet at `t_ns`: `data` holds its first bytes (the headers, or all of it), and
    /// `orig_len` its length on the wire.
    pub fn write(&mut self, t_ns: u64, data: &[u8], orig_len: u32) -> Result<(), String> {
        let packet = PcapPacket::new(Duration::from_nanos(t_ns), orig_len, data);
        self.writer
            .write_packet(&packet)
            .map(drop)
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// Flush what is buffered.
    pub fn finish(self) -> Result<(), String> {
        let path = self.path;
        self.writer
            .into_writer()
            .flush()
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// A file name made of `name`'s letters, digits, `-`, `_` and `.` (others become `_`).
pub fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}
