//! axd started in this process (for tests that need its internals or fast restarts), and clients.

use std::{net::SocketAddr, time::Duration};

use ax_proto::v1::admin_service_client::AdminServiceClient;
use ax_scheduler::{
    config::{Config, HumanDuration, Options},
    server::{self, Running},
};
use tonic::transport::Channel;

use crate::TestDb;

/// Short timings so lifecycle tests finish quickly: heartbeat 500 ms (dead after 1.5 s), ack
/// timeout 3 s, lost-worker grace 1 s, loops poll at most every 200 ms. The heartbeat is not
/// shorter: with 200 ms (dead after 600 ms), workers on a loaded 2-core machine (a full test
/// run beside other work) missed their heartbeats, and their sessions ended under the tests.
pub fn fast_options(db: &TestDb) -> Options {
    let ms = |n| Some(HumanDuration(Duration::from_millis(n)));
    Options {
        database_url: Some(db.url.clone()),
        listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        heartbeat_interval: ms(500),
        ack_timeout: ms(3000),
        lost_worker_grace: ms(1000),
        poll_interval: ms(200),
        scheduler_heartbeat: ms(500),
        trigger_lookahead: ms(500),
        shutdown_timeout: ms(3000),
        ..Options::default()
    }
}

/// An axd running in this process.
pub struct Axd {
    /// The running server.
    pub running: Running,
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
}

impl Axd {
    /// Starts axd on `db` with [`fast_options`] changed by `tweak`.
    pub async fn start(db: &TestDb, tweak: impl FnOnce(&mut Options)) -> Axd {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut o = fast_options(db);
        tweak(&mut o);
        let config = Config::from_options(o).expect("config");
        let running = server::start(&config, None).await.expect("start axd");
        let endpoint = format!("http://{}", running.addr);
        Axd { running, endpoint }
    }

    /// An admin client.
    pub async fn admin(&self) -> AdminServiceClient<Channel> {
        AdminServiceClient::new(channel(&self.endpoint).await)
    }

    /// Stops it (graceful, bounded).
    pub async fn stop(self) {
        self.running.shutdown(Duration::from_secs(5)).await;
    }
}

/// A plaintext channel to `endpoint`.
pub async fn channel(endpoint: &str) -> Channel {
    tonic::transport::Endpoint::from_shared(endpoint.to_owned()).expect("endpoint").connect().await.expect("connect")
}
