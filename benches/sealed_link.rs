//! The cost of `cluster.encrypt` on the data path: records sealed and opened in memory (one
//! core each way), then 2 GiB through a loopback TCP link, plain and sealed, with the writer
//! and the reader on their own threads (GB/s of the transfer and GB per CPU-second of the
//! process). `cargo bench --bench sealed_link`; figures in BENCHMARKS.md ("Encrypted links").

use ares::protocol::handshake::Role;
use ares::protocol::secret::Secret;
use ares::protocol::secure::{Agreement, Cipher, Conn};
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TOTAL: usize = 2 << 30;
const WRITE: usize = 4 << 20;

fn ciphers() -> (Cipher, Cipher) {
    let a = Agreement::new(&Secret::random(), Role::Peer, &[1; 32], &[2; 32]);
    let (init, m1) = a.initiate().unwrap();
    let (listener, m2) = a.respond(&m1).unwrap();
    (init.finish(&m2).unwrap(), listener)
}

/// CPU seconds (user + system) of this process so far.
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<f64> = stat
        .rsplit_once(") ")
        .map(|(_, r)| r.split(' ').map(|x| x.parse().unwrap_or(0.0)).collect())
        .unwrap_or_default();
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) / 100.0
}

fn in_memory() {
    let (c, l) = ciphers();
    let (mut seal, _) = c.split();
    let (_, mut open) = l.split();
    let data = vec![0x5au8; WRITE];
    let reps = 64;
    // Sealed once untimed (the pages of every batch touched), then opened in order.
    let mut batches: Vec<Vec<u8>> = Vec::with_capacity(reps);
    for _ in 0..reps {
        let mut wire = Vec::with_capacity(WRITE + WRITE / 1000);
        seal.seal(&data, &mut wire).unwrap();
        batches.push(wire);
    }
    let mut plain = Vec::with_capacity(WRITE + (64 << 10));
    let t = Instant::now();
    for wire in &batches {
        plain.clear();
        assert_eq!(open.open(wire, &mut plain).unwrap(), wire.len());
    }
    let open_gbs = (reps * WRITE) as f64 / t.elapsed().as_secs_f64() / 1e9;
    assert_eq!(plain, data);
    // Sealing into one reused buffer, as a link's writer does.
    let mut wire = Vec::with_capacity(WRITE + WRITE / 1000);
    let t = Instant::now();
    for _ in 0..reps {
        wire.clear();
        seal.seal(&data, &mut wire).unwrap();
    }
    let seal_gbs = (reps * WRITE) as f64 / t.elapsed().as_secs_f64() / 1e9;
    println!("in memory, one core: seal {seal_gbs:.2} GB/s, open {open_gbs:.2} GB/s");
}

fn over_loopback(sealed: bool) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (c, l) = if sealed {
            let (c, l) = ciphers();
            (Some(c), Some(l))
        } else {
            (None, None)
        };
        let reader = tokio::spawn(async move {
            let (s, _) = listener.accept().await.unwrap();
            let mut conn = Conn::new(s, l);
            let mut buf = vec![0u8; 1 << 20];
            let mut got = 0usize;
            while got < TOTAL {
                let n = conn.read(&mut buf).await.unwrap();
                assert!(n > 0);
                got += n;
            }
        });
        let s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.set_nodelay(true).unwrap();
        let mut conn = Conn::new(s, c);
        let data = vec![0x5au8; WRITE];
        let (cpu0, t) = (cpu_s(), Instant::now());
        let writer = tokio::spawn(async move {
            for _ in 0..TOTAL / WRITE {
                conn.write_all(&data).await.unwrap();
            }
            conn.flush().await.unwrap();
        });
        writer.await.unwrap();
        reader.await.unwrap();
        let (secs, cpu) = (t.elapsed().as_secs_f64(), cpu_s() - cpu0);
        println!(
            "loopback {}: {:.2} GB/s, {:.2} GB per CPU-second ({:.2} CPU-s for {} GiB)",
            if sealed { "sealed" } else { "plain " },
            TOTAL as f64 / secs / 1e9,
            TOTAL as f64 / cpu / 1e9,
            cpu,
            TOTAL >> 30
        );
    });
}

fn main() {
    in_memory();
    for sealed in [false, true, false, true] {
        over_loopback(sealed);
    }
}
