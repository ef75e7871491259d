//! The accept loop: HTTP/1.1 connections served by hyper with socket-level timeouts and
//! a bounded graceful shutdown.
//!
//! `axum::serve` gives hyper no timer, so a client that opens a connection and sends
//! half a request line, or headers one byte a minute, holds its connection (and a task)
//! for ever. Here each connection gets hyper's header-read timeout: the whole request
//! head must arrive within [`crate::HttpConfig::header_read_timeout`] of the moment the
//! server starts waiting for it (the connection opened, or the previous response sent on
//! a keep-alive connection), else hyper closes the connection without a response (an
//! HTTP/1.1 server may close an idle connection at any time). Slow bodies and slow handlers are the
//! request timeout's business (`middleware::bounded`: 503 `timeout` with the error body).
//!
//! On shutdown the listener stops accepting, idle connections close at once, in-flight
//! requests finish (each is bounded by the request timeout), and connections still open
//! after [`crate::HttpConfig::drain_timeout`] are dropped with a warning.

use std::future::Future;
use std::time::Duration;

use axum::body::Body;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// Socket-level limits of [`serve_connections`].
#[derive(Debug, Clone, Copy)]
pub struct ConnLimits {
    pub header_read_timeout: Duration,
    pub drain_timeout: Duration,
}

/// Serves `app` on `listener` until `shutdown` completes, then drains.
pub async fn serve_connections(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(
            app.clone()
                .map_request(|req: hyper::Request<Incoming>| req.map(Body::new)),
        );
        let conn = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("all connections drained"),
        () = tokio::time::sleep(limits.drain_timeout) => {
            tracing::warn!(after = ?limits.drain_timeout, "connections still open after the drain timeout are dropped");
        }
    }
}
