//! Network throughput benchmark: `scripts/bench.sh nn [options]`
//! (= `cargo run --release -p vzero-model --example nnbench -- [options]`).
//!
//! Inference = the full `Model::evaluate` path self-play uses (host->device copy, forward in
//! eval mode under no_grad, gather of the legal moves' logits, masked softmax, W/D/L), with
//! `--legal` legal moves per position. Training = one `Trainer::step` (forward + backward +
//! SGD-momentum update) on a batch of `--train-batch` rows with `--legal` sparse policy targets.
//! Each cell is the median of `--reps` timed runs of >= ~0.2 s.
//!
//! Options: --nets 4x32,6x64  --threads 1,2  --board 8 (or HxW)  --planes 64  --policy 4672
//!          --legal 32  --batches 1,8,32,128,512  --train-batch 256  --reps 5  --device auto
//!          --head dense|spatial|mapped  (spatial: policy = 73 planes x H x W, --policy ignored;
//!          mapped: 73 planes, --policy moves mapped onto distinct cells)
//!          --raw  (inference = bare forward pass on a prepared tensor, to see the API's overhead)

use std::time::Instant;

use vzero_model::{
    device, DeviceChoice, LegalMoves, Model, NetConfig, PolicyHead, PolicyTargets, TrainBatch,
    TrainConfig, Trainer,
};

struct Opts {
    nets: Vec<(usize, usize)>,
    threads: Vec<usize>,
    h: usize,
    w: usize,
    planes: usize,
    policy: usize,
    legal: usize,
    batches: Vec<usize>,
    train_batch: usize,
    reps: usize,
    device: DeviceChoice,
    head: String,
    raw: bool,
}

fn list(s: &str) -> Vec<usize> {
    s.split(',')
        .map(|x| x.trim().parse().expect("number list"))
        .collect()
}

fn parse() -> Opts {
    let mut o = Opts {
        nets: vec![(4, 32), (6, 64)],
        threads: vec![1, 2],
        h: 8,
        w: 8,
        planes: 64,
        policy: 4672,
        legal: 32,
        batches: vec![1, 8, 32, 128, 512],
        train_batch: 256,
        reps: 5,
        device: DeviceChoice::Auto,
        head: "dense".into(),
        raw: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--nets" => {
                o.nets = v
                    .split(',')
                    .map(|n| {
                        let (b, c) = n.split_once('x').expect("--nets BxC,...");
                        (b.parse().unwrap(), c.parse().unwrap())
                    })
                    .collect()
            }
            "--threads" => o.threads = list(&v),
            "--board" => {
                let (h, w) = v.split_once('x').unwrap_or((&v, &v));
                o.h = h.parse().unwrap();
                o.w = w.parse().unwrap();
            }
            "--planes" => o.planes = v.parse().unwrap(),
            "--policy" => o.policy = v.parse().unwrap(),
            "--legal" => o.legal = v.parse().unwrap(),
            "--batches" => o.batches = list(&v),
            "--train-batch" => o.train_batch = v.parse().unwrap(),
            "--reps" => o.reps = v.parse().unwrap(),
            "--device" => o.device = v.parse().unwrap_or_else(|e| panic!("{e}")),
            "--head" => o.head = v.clone(),
            "--raw" => {
                o.raw = true;
                i += 1;
                continue;
            }
            "-h" | "--help" => {
                println!(
                    "{}",
                    include_str!("nnbench.rs")
                        .lines()
                        .take(15)
                        .map(|l| l.trim_start_matches("//!"))
                        .collect::<Vec<_>>()
                        .join("\n")
                );
                std::process::exit(0);
            }
            other => panic!("unknown option {other} (try --help)"),
        }
        i += 2;
    }
    match o.head.as_str() {
        "spatial" => o.policy = 73 * o.h * o.w,
        "dense" | "mapped" => {}
        other => panic!("--head dense|spatial|mapped, not {other}"),
    }
    o
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Median over `reps` runs of `f` (which processes `items` items per call) in items/s.
fn measure(reps: usize, items: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm-up (allocator, oneDNN primitive caches)
    let t = Instant::now();
    f();
    let one = t.elapsed().as_secs_f64().max(1e-6);
    let calls = ((0.2 / one).ceil() as usize).clamp(1, 10_000);
    let mut rates: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                f();
            }
            (calls * items) as f64 / t.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    rates[rates.len() / 2]
}

fn main() {
    let o = parse();
    let dev = o.device.resolve().unwrap_or_else(|e| panic!("{e}"));
    device::set_threads(1);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let max_b = o
        .batches
        .iter()
        .copied()
        .max()
        .unwrap_or(1)
        .max(o.train_batch);
    let per = o.planes * o.h * o.w;
    let planes: Vec<f32> = (0..max_b * per)
        .map(|_| {
            if rng.next().is_multiple_of(8) {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    let mut legal = LegalMoves::new();
    let mut targets = PolicyTargets::new();
    for _ in 0..max_b {
        let moves: Vec<u32> = (0..o.legal)
            .map(|_| (rng.next() % o.policy as u64) as u32)
            .collect();
        let mut moves = moves;
        moves.sort_unstable();
        moves.dedup();
        legal.push(&moves);
        let p = 1.0 / moves.len() as f32;
        targets.push(moves.iter().map(|&m| (m, p)));
    }
    let wdl: Vec<[f32; 3]> = (0..max_b)
        .map(|i| [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]][i % 3])
        .collect();
    let ml: Vec<f32> = (0..max_b).map(|i| (i % 120) as f32).collect();

    println!(
        "nnbench: board {}x{}, {} input planes, policy {} ({} head), {} legal moves/position, device {:?}, median of {} runs",
        o.h,
        o.w,
        o.planes,
        o.policy,
        match o.head.as_str() {
            "spatial" => "spatial 73-plane",
            "mapped" => "mapped, 73 planes",
            _ => "dense 8-plane",
        },
        o.legal,
        dev,
        o.reps
    );
    if let Ok(l) = std::fs::read_to_string("/proc/loadavg") {
        let l: Vec<&str> = l.split_whitespace().take(3).collect();
        println!(
            "load average at start: {} ({} cores): 2-thread numbers collapse when another process holds a core",
            l.join(" "),
            device::training_threads()
        );
    }
    if o.raw {
        println!("--raw: inference = forward pass only (no input copy, no masking/softmax)");
    }
    println!("inference = Model::evaluate (masked softmax over legal moves + W/D/L), positions/s; train = Trainer::step, SGD momentum, batch {}, samples/s", o.train_batch);
    println!();
    let mut header = "| net | params | threads |".to_string();
    let mut sep = "|---|---:|---:|".to_string();
    for b in &o.batches {
        header += &format!(" b={b} |");
        sep += "---:|";
    }
    header += &format!(" train b={} |", o.train_batch);
    sep += "---:|";
    println!("{header}\n{sep}");

    for &(blocks, channels) in &o.nets {
        let cfg = NetConfig::with_size(o.planes, o.h, o.w, o.policy, blocks, channels);
        let cells = 73 * o.h * o.w;
        let map: Vec<u32> = (0..o.policy).map(|i| (cells - 1 - i) as u32).collect();
        let make = |seed: u64| {
            tch::manual_seed(seed as i64);
            match o.head.as_str() {
                "spatial" => Model::new(
                    &NetConfig {
                        policy_head: PolicyHead::Spatial { planes: 73 },
                        ..cfg.clone()
                    },
                    dev,
                ),
                "mapped" => Model::with_policy_map(
                    &NetConfig {
                        policy_head: PolicyHead::Mapped { planes: 73 },
                        ..cfg.clone()
                    },
                    dev,
                    &map,
                ),
                _ => Model::new(&cfg, dev),
            }
            .expect("model")
        };
        let model = make(1);
        for &t in &o.threads {
            device::set_threads(t);
            let mut row = format!(
                "| {blocks}x{channels} | {:.2} M | {t} |",
                model.num_parameters() as f64 / 1e6
            );
            for &b in &o.batches {
                let lm = {
                    let mut lm = LegalMoves::with_capacity(b, b * o.legal);
                    for i in 0..b {
                        lm.push(legal.get(i));
                    }
                    lm
                };
                let mut out = vzero_model::Evaluation::default();
                let rate = if o.raw {
                    let (x, _) = model
                        .input_tensors(b, &planes[..b * per], None)
                        .expect("input");
                    measure(o.reps, b, || {
                        tch::no_grad(|| {
                            let o = model.forward_t(&x, None, false);
                            let _ = o.wdl.double_value(&[0, 0]);
                        })
                    })
                } else {
                    measure(o.reps, b, || {
                        model
                            .evaluate_into(&planes[..b * per], None, &lm, &mut out)
                            .expect("evaluate");
                    })
                };
                row += &format!(" {rate:.0} |");
            }
            // Training on a copy so inference numbers of later rows use the same weights.
            let train_model = make(2);
            let mut tr = Trainer::new(&train_model, TrainConfig::sgd()).expect("trainer");
            let tb = o.train_batch;
            let mut tt = PolicyTargets::new();
            for i in 0..tb {
                let (idx, p) = targets.row(i);
                tt.push(idx.iter().copied().zip(p.iter().copied()));
            }
            let batch = TrainBatch {
                planes: &planes[..tb * per],
                globals: None,
                policy: &tt,
                wdl: &wdl[..tb],
                moves_left: Some(&ml[..tb]),
                weights: None,
            };
            let rate = measure(o.reps, tb, || {
                tr.step(&train_model, &batch).expect("step");
            });
            row += &format!(" {rate:.0} |");
            println!("{row}");
        }
    }
}
