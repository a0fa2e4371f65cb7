//! Applications on top of the transport: what `src` writes into its sender, and what `dst`
//! asks for on the request stream. Each is a sans-IO state machine told what arrived and what
//! time it is, so the engine (`slowstart_sim`) and the UDP stack (`slowstart_udp`, which runs
//! the web client and server over real sockets) drive the same code. Below: the transport
//! (`slowstart_transport`) and the config (`slowstart_config`, each application's table and
//! the trace rows it writes). One file per application:
//!
//! - [`bulk`]: today's transfer, everything written at once.
//! - [`web`]: HTTP/1.1-like request/response exchanges on one connection (initcwnd seed).
//! - [`bittorrent`]: peer-wire block requests with libtorrent's request-queue policy (libtorrent
//!   seed), its controller a small sans-IO struct, [`bittorrent::RequestQueue`], and BEP 3's
//!   message sizes (the one copy; the swarm sizes its messages with them).
//! - [`swarm`]: a BitTorrent swarm's peer wire, the one BitTorrent model of many peers: tracker,
//!   choker, piece picker, request pipeline and send buffer. It drives its connections through
//!   a narrow [`swarm::Network`] the engine implements (the engine routes packets and fires
//!   what falls due), not through the five points below.
//!
//! [`App`] is a flow session's application ([`slowstart_transport::FlowApp`]): the session
//! calls it at five points: the flow starts, the connection is established, request bytes
//! reach `src` in order, data reaches `dst` in order, and the application's own timer fires.
//! Both ends of one flow live in one value: the simulation is the only observer, so each side
//! reads only what its own endpoint would know.

pub mod bittorrent;
pub mod bulk;
pub mod swarm;
pub mod web;

use serde::Serialize;

use slowstart_config::{AppConfig, FlowConfig};
use slowstart_transport::request::RequestSender;
use slowstart_transport::{FlowApp, Timer};

use slowstart_config::trace::AppRow;

pub use slowstart_transport::Ctx;

pub enum App {
    Bulk(bulk::BulkApp),
    Web(web::WebApp),
    Bittorrent(bittorrent::BittorrentApp),
}

/// One flow's application results, for the JSON summary's `apps` list.
#[derive(Clone, Debug, Serialize)]
pub struct AppSummary {
    pub flow: u32,
    #[serde(flatten)]
    pub detail: AppDetail,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AppDetail {
    Web(web::WebSummary),
    Bittorrent(bittorrent::BittorrentSummary),
}

impl App {
    pub fn new(cfg: &FlowConfig) -> Self {
        match &cfg.app {
            AppConfig::Bulk => App::Bulk(bulk::BulkApp::new(cfg.size_bytes)),
            AppConfig::Web(w) => App::Web(web::WebApp::new(w, cfg.start_ns)),
            AppConfig::Bittorrent(b) => {
                App::Bittorrent(bittorrent::BittorrentApp::new(b, cfg.start_ns))
            }
        }
    }

    /// Done, for applications that decide it themselves (`None`: the transport decides).
    pub fn finished(&self) -> Option<bool> {
        match self {
            App::Bulk(_) => None,
            App::Web(a) => Some(a.finished()),
            App::Bittorrent(a) => Some(a.finished()),
        }
    }

    /// A series row after an event that changed the application's state, if it keeps one, and
    /// whether it must be recorded regardless of the sampling interval.
    pub fn row(&mut self, now: u64, flow: u32) -> Option<(AppRow, bool)> {
        match self {
            App::Bittorrent(a) => a.take_row(now, flow),
            _ => None,
        }
    }

    pub fn summary(&self, flow: u32, requests: &RequestSender) -> Option<AppSummary> {
        let detail = match self {
            App::Bulk(_) => return None,
            App::Web(a) => AppDetail::Web(a.summary(requests)),
            App::Bittorrent(a) => AppDetail::Bittorrent(a.summary(requests)),
        };
        Some(AppSummary { flow, detail })
    }
}

impl FlowApp for App {
    #[inline]
    fn uses_requests(&self) -> bool {
        !matches!(self, App::Bulk(_))
    }

    /// A bulk source writes everything; BitTorrent starts its clock.
    fn on_start(&mut self, ctx: &mut Ctx) {
        match self {
            App::Bulk(a) => a.on_start(ctx.sender),
            App::Web(_) => {}
            App::Bittorrent(a) => a.on_start(ctx),
        }
    }

    fn on_established(&mut self, ctx: &mut Ctx) {
        match self {
            App::Bulk(_) => {}
            App::Web(a) => a.on_established(ctx),
            App::Bittorrent(a) => a.on_established(ctx),
        }
    }

    fn on_requests(&mut self, upto: u64, ctx: &mut Ctx) {
        match self {
            App::Bulk(_) => {}
            App::Web(a) => a.on_requests(upto, ctx),
            App::Bittorrent(a) => a.on_requests(upto, ctx),
        }
    }

    fn on_delivered(&mut self, upto: u64, ctx: &mut Ctx) {
        match self {
            App::Bulk(_) => {}
            App::Web(a) => a.on_delivered(upto, ctx),
            App::Bittorrent(a) => a.on_delivered(upto, ctx),
        }
    }

    /// BitTorrent's once-a-second tick.
    #[inline]
    fn timer(&self) -> Option<&Timer> {
        match self {
            App::Bittorrent(a) => Some(&a.tick),
            _ => None,
        }
    }

    #[inline]
    fn timer_mut(&mut self) -> Option<&mut Timer> {
        match self {
            App::Bittorrent(a) => Some(&mut a.tick),
            _ => None,
        }
    }

    fn on_timeout(&mut self, ctx: &mut Ctx) {
        if let App::Bittorrent(a) = self {
            a.on_tick(ctx);
        }
    }
}

/// Nanoseconds as seconds, for summaries.
pub(crate) fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}
