//! Bulk transfer: `src` writes the whole transfer (or an endless stream) when the flow starts,
//! so the transport, never the application, limits sending.

use slowstart_transport::sender::Sender;

pub struct BulkApp {
    size_bytes: Option<u64>,
}

impl BulkApp {
    pub fn new(size_bytes: Option<u64>) -> Self {
        BulkApp { size_bytes }
    }

    pub fn on_start(&self, sender: &mut Sender) {
        match self.size_bytes {
            Some(size) => {
                sender.write(size);
                sender.close();
            }
            None => sender.write(u64::MAX),
        }
    }
}
