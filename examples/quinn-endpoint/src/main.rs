//! A QUIC transfer on localhost whose sender runs a slowstart controller inside quinn:
//! `cargo run -- [SPEC] [BYTES]` (default `cubic:slow_start=hystart++`, 4 MB). Prints the
//! controller's spec, the bytes the server received and the sender's window at the end.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use quinn::{ClientConfig, Endpoint, ServerConfig, TransportConfig};
use slowstart_quinn::SlowstartFactory;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let spec = args
        .next()
        .unwrap_or_else(|| "cubic:slow_start=hystart++".into());
    let bytes: usize = args.next().map_or(Ok(4 << 20), |b| b.parse())?;
    // An unknown algorithm or a bad parameter is refused here, before any connection.
    let cc = SlowstartFactory::new(&spec)?.initial_window_packets(10);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let localhost = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()])?;
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(cert.key_pair.serialize_der());
        let server_config =
            ServerConfig::with_single_cert(vec![cert.cert.der().clone()], key.into())?;
        let server = Endpoint::server(server_config, localhost)?;
        let server_addr = server.local_addr()?;
        let receiving = tokio::spawn(async move {
            let conn = server.accept().await.ok_or("no connection")?.await?;
            let mut stream = conn.accept_uni().await?;
            let data = stream.read_to_end(usize::MAX).await?;
            conn.closed().await;
            Ok::<usize, Box<dyn std::error::Error + Send + Sync>>(data.len())
        });

        // The sender's congestion controller is slowstart's.
        let mut transport = TransportConfig::default();
        transport.congestion_controller_factory(Arc::new(cc));
        let mut roots = rustls::RootCertStore::empty();
        roots.add(cert.cert.der().clone())?;
        let mut client_config = ClientConfig::with_root_certificates(Arc::new(roots))?;
        client_config.transport_config(Arc::new(transport));
        let client = Endpoint::client(localhost)?;
        let conn = client
            .connect_with(client_config, server_addr, "localhost")?
            .await?;
        let mut stream = conn.open_uni().await?;
        stream.write_all(&vec![0u8; bytes]).await?;
        stream.finish()?;
        stream.stopped().await?;
        let cwnd = conn.stats().path.cwnd;
        conn.close(0u32.into(), b"done");
        let received = receiving.await?.map_err(|e| e.to_string())?;
        client.wait_idle().await;
        println!("{spec}: {received} bytes received, cwnd {cwnd} bytes at the end");
        Ok(())
    })
}
