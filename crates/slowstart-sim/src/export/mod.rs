//! What engineers open: packet captures per link direction ([`pcap`], through the TCP/IP view
//! of [`tcp`]) and qlog files per flow ([`qlog`]). Both stream to disk as the run goes; a run
//! without them pays one branch on an `Option` per packet.

pub use slowstart_link::pcap;
pub mod qlog;
pub mod tcp;

use std::path::{Path, PathBuf};

use slowstart_transport::packet::Packet;

use crate::SimError;

/// Where to write the exports; `None` leaves one out.
#[derive(Clone, Debug, Default)]
pub struct ExportDirs {
    pub qlog: Option<PathBuf>,
    pub pcap: Option<PathBuf>,
}

impl ExportDirs {
    pub fn is_empty(&self) -> bool {
        self.qlog.is_none() && self.pcap.is_none()
    }
}

/// Create `dir` (and its parents); `option` names the setting in the error.
pub(crate) fn make_dir(dir: &Path, option: &str) -> Result<(), SimError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| SimError(format!("{option}: cannot create {}: {e}", dir.display())))
}

/// The captures of a run: one file per link direction, packets written as a link accepts them.
pub(crate) struct Captures {
    files: Vec<pcap::PcapFile>,
    views: Vec<tcp::TcpView>,
    buf: Vec<u8>,
    /// The first write error; writing stops there and the run reports it at its end.
    pub error: Option<String>,
}

impl Captures {
    pub fn new(dir: &Path, links: &[&str], views: Vec<tcp::TcpView>) -> Result<Self, SimError> {
        make_dir(dir, "pcap")?;
        let files = links
            .iter()
            .map(|name| {
                let path = dir.join(format!("{}.pcap", pcap::file_stem(name)));
                pcap::PcapFile::create(&path).map_err(|e| SimError(format!("pcap: {e}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Captures {
            files,
            views,
            buf: Vec::with_capacity(128),
            error: None,
        })
    }

    /// Link direction `c` took `p` at `now` (before its queue or loss decide; a packet they
    /// drop is in this capture and in no later one).
    pub fn on_link(&mut self, c: u32, now: u64, p: &Packet) {
        if self.error.is_some() {
            return;
        }
        self.buf.clear();
        let len = self.views[p.flow as usize].headers(p, &mut self.buf);
        if let Err(e) = self.files[c as usize].write(now, &self.buf, len) {
            self.error = Some(format!("pcap: {e}"));
        }
    }

    /// `p` reached its endpoint.
    pub fn on_delivered(&mut self, p: &Packet) {
        self.views[p.flow as usize].on_delivered(p);
    }

    pub fn finish(self) -> Result<(), String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        for f in self.files {
            f.finish().map_err(|e| format!("pcap: {e}"))?;
        }
        Ok(())
    }
}
