//! Rough block-time probe: a state of N accounts, then blocks of ~9,000 mixed operations.
//! Usage: cargo run --release -p arbor --example hotpath -- [accounts] [blocks]

use std::time::Instant;

use arbor::Store;

fn key(i: u64) -> String {
    format!("{:012x}", i.wrapping_mul(0x9E3779B97F4A7C15) >> 16)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let accounts: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let blocks: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = arbor::Config::default();
    if std::env::var("NOSYNC").is_ok() {
        cfg.durability = arbor::Durability::Interval(std::time::Duration::from_secs(3600));
    }
    let store = Store::open_with(dir.path(), cfg).unwrap();
    let t0 = Instant::now();
    let mut t = store.empty();
    let fields = ["balance", "counter", "delegate", "used_bytes", "paid_bytes"];
    for i in 0..accounts {
        let k = key(i);
        for f in &fields[..2] {
            t.add_mut(&["data", "contracts", "index", &k, f], &(i as u32).to_le_bytes()).unwrap();
        }
    }
    let mut parent = store.commit(&t, &[], 0, "Tezos", "init").unwrap();
    println!("initial state: {} values in {:?}, log {} MB", accounts * 2, t0.elapsed(), store.log_bytes() >> 20);
    let mut rng = 12345u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut times = Vec::new();
    let mut commit_times = Vec::new();
    let mut hash_times = Vec::new();
    for b in 0..blocks {
        let start = Instant::now();
        let mut t = store.checkout(&parent).unwrap();
        for op in 0..3000u64 {
            // mem, read, write of mostly hot paths, a long tail of random accounts.
            let i = if op % 4 == 0 { next() % accounts } else { next() % 64 };
            let k = key(i);
            let f = fields[(next() % 5) as usize];
            let p = ["data", "contracts", "index", &k, f];
            let _ = t.mem(&p).unwrap();
            let v = t.find(&p).unwrap();
            let n = v.map_or(0, |v| v.len() as u64) + b;
            t.add_mut(&p, &n.to_le_bytes()).unwrap();
        }
        let c = Instant::now();
        let _ = t.hash();
        hash_times.push(c.elapsed());
        parent = store.commit(&t, &[parent], b as i64, "Tezos", "").unwrap();
        commit_times.push(c.elapsed());
        times.push(start.elapsed());
    }
    times.sort();
    commit_times.sort();
    hash_times.sort();
    println!("hash p50 {:?}", hash_times[hash_times.len() / 2]);
    let mean = times.iter().sum::<std::time::Duration>() / times.len() as u32;
    println!(
        "blocks {blocks}: mean {:?} p50 {:?} max {:?}; commit p50 {:?}; log {} MB",
        mean,
        times[times.len() / 2],
        times.last().unwrap(),
        commit_times[commit_times.len() / 2],
        store.log_bytes() >> 20
    );
}
