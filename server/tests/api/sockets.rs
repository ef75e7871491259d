//! Socket-level behaviour of the real accept loop (`listen::serve_connections`) on a
//! loopback port: silent and stalled clients are cut off by the header-read timeout, complete
//! requests are served, and shutdown drains and returns.

use std::time::{Duration, Instant};

use grantmatch_server::listen::{serve_connections, ConnLimits};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

const HEADER_TIMEOUT: Duration = Duration::from_millis(400);

struct Running {
    addr: std::net::SocketAddr,
    stop: oneshot::Sender<()>,
    done: tokio::task::JoinHandle<()>,
}

async fn start() -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = super::hardening::hx(Default::default()).state;
    let (stop, stopped) = oneshot::channel::<()>();
    let limits = ConnLimits {
        header_read_timeout: HEADER_TIMEOUT,
        drain_timeout: Duration::from_secs(5),
    };
    let done = tokio::spawn(serve_connections(
        listener,
        grantmatch_server::app(state),
        limits,
        async {
            let _ = stopped.await;
        },
    ));
    Running { addr, stop, done }
}

/// Reads until the peer closes (or 5 s pass); returns what arrived and how long it took.
async fn read_to_close(stream: &mut TcpStream) -> (String, Duration) {
    let started = Instant::now();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut buf)).await;
    (
        String::from_utf8_lossy(&buf).into_owned(),
        started.elapsed(),
    )
}

#[tokio::test]
async fn a_stalled_request_head_is_cut_off() {
    let s = start().await;
    let mut stream = TcpStream::connect(s.addr).await.unwrap();
    // Half a request head, then silence.
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let (answer, took) = read_to_close(&mut stream).await;
    assert!(
        took < Duration::from_secs(3),
        "the stalled connection stayed open {took:?}"
    );
    assert!(answer.is_empty(), "{answer}");
    s.stop.send(()).unwrap();
    s.done.await.unwrap();
}

#[tokio::test]
async fn a_silent_connection_is_closed() {
    let s = start().await;
    let mut stream = TcpStream::connect(s.addr).await.unwrap();
    let (answer, took) = read_to_close(&mut stream).await;
    assert!(answer.is_empty(), "{answer}");
    assert!(took < Duration::from_secs(3), "open for {took:?}");
    s.stop.send(()).unwrap();
    s.done.await.unwrap();
}

#[tokio::test]
async fn a_trickled_request_head_is_cut_off() {
    let s = start().await;
    let mut stream = TcpStream::connect(s.addr).await.unwrap();
    let head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let started = Instant::now();
    let mut cut_off = false;
    // One byte every 50 ms: each read is quick, the whole head is too slow.
    for b in head {
        if stream.write_all(&[*b]).await.is_err() {
            cut_off = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (answer, _) = read_to_close(&mut stream).await;
    assert!(
        cut_off || !answer.starts_with("HTTP/1.1 200"),
        "a head trickled over {:?} was served: {answer}",
        started.elapsed()
    );
    s.stop.send(()).unwrap();
    s.done.await.unwrap();
}

#[tokio::test]
async fn complete_requests_are_served_and_shutdown_drains() {
    let s = start().await;
    let mut stream = TcpStream::connect(s.addr).await.unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let (answer, _) = read_to_close(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.contains("x-content-type-options: nosniff"),
        "{answer}"
    );

    // An idle keep-alive connection does not hold the shutdown up.
    let _idle = TcpStream::connect(s.addr).await.unwrap();
    let started = Instant::now();
    s.stop.send(()).unwrap();
    s.done.await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(TcpStream::connect(s.addr).await.is_err(), "still accepting");
}
