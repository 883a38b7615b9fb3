//! Network throughput benchmark: `scripts/bench.sh nn [options]`
//! (= `cargo run --release -p vzero-model --example nnbench -- [options]`).
//!
//! Inference = the full `Model::evaluate` path self-play uses (input layout/precision
//! conversion, folded forward pass, legal-move policy readout, masked softmax, W/D/L), with
//! `--legal` legal moves per position; cells are `positions/s (GFLOP/s)`, GFLOP/s from the
//! nominal FLOPs of the full forward pass (`NetConfig::flops_per_position`). Training = one
//! `Trainer::step` (forward + backward + SGD-momentum update) on `--train-batch` rows.
//! Each cell is the median of `--reps` timed runs of >= ~0.2 s; the paths of `--compare` are
//! interleaved run by run.
//!
//! Options: --nets 4x32,6x64  --threads 1,2  --batches 1,8,32,128,512  --legal 32  --reps 5
//!          --variant empire  (the variant's real net: its input planes, board, mapped head;
//!          default: the synthetic net below)
//!          --board 8 (or HxW)  --planes 64  --policy 4672  --head dense|spatial|mapped
//!          (synthetic net; spatial: 73 planes x H x W, --policy ignored; mapped: 73 planes)
//!          --precision auto|f32|bf16  (default: $VZERO_INFERENCE_PRECISION or auto)
//!          --compare  (rows for the reference path (unfused f32), fused f32 and fused bf16)
//!          --raw  (inference = bare reference forward pass on a prepared tensor)
//!          --train-batch 256 (0 = no training column)  --device auto

use std::time::Instant;

use vzero_model::{
    device, fresh_model, net_config, DeviceChoice, Evaluation, InferencePrecision, LegalMoves,
    Model, NetConfig, PolicyHead, PolicyTargets, TrainBatch, TrainConfig, Trainer,
};
use vzero_rules::Variant;

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
    variant: Option<Variant>,
    precision: Option<InferencePrecision>,
    compare: bool,
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
        variant: None,
        precision: None,
        compare: false,
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
            "--variant" => o.variant = Some(Variant::builtin(&v).unwrap_or_else(|e| panic!("{e}"))),
            "--precision" => o.precision = Some(v.parse().unwrap_or_else(|e| panic!("{e}"))),
            "--compare" | "--raw" => {
                if args[i] == "--raw" {
                    o.raw = true;
                } else {
                    o.compare = true;
                }
                i += 1;
                continue;
            }
            "-h" | "--help" => {
                println!(
                    "{}",
                    include_str!("nnbench.rs")
                        .lines()
                        .take_while(|l| l.starts_with("//!"))
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

/// Medians over `reps` rounds; each round times every closure once for >= ~0.2 s (interleaved,
/// so slow phases of a shared machine hit all of them alike). Returns items/s per closure.
fn measure(reps: usize, items: usize, fs: &mut [Box<dyn FnMut() + '_>]) -> Vec<f64> {
    let calls: Vec<usize> = fs
        .iter_mut()
        .map(|f| {
            f(); // warm-up (allocator, oneDNN primitive caches, the inference fold)
            let t = Instant::now();
            f();
            let one = t.elapsed().as_secs_f64().max(1e-6);
            ((0.2 / one).ceil() as usize).clamp(1, 10_000)
        })
        .collect();
    let mut rates = vec![Vec::new(); fs.len()];
    for _ in 0..reps.max(1) {
        for (k, f) in fs.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..calls[k] {
                f();
            }
            rates[k].push((calls[k] * items) as f64 / t.elapsed().as_secs_f64());
        }
    }
    rates
        .into_iter()
        .map(|mut r| {
            r.sort_by(|a, b| a.total_cmp(b));
            r[r.len() / 2]
        })
        .collect()
}

/// The net of one `--nets` entry: the variant's real net, or the synthetic one.
fn make_model(o: &Opts, blocks: usize, channels: usize, seed: u64) -> Model {
    let dev = o.device.resolve().unwrap_or_else(|e| panic!("{e}"));
    if let Some(v) = o.variant {
        let cfg = net_config(v, blocks, channels).expect("net config");
        return fresh_model(v, &cfg, dev, seed).expect("model");
    }
    let cfg = NetConfig::with_size(o.planes, o.h, o.w, o.policy, blocks, channels);
    let cells = 73 * o.h * o.w;
    let map: Vec<u32> = (0..o.policy).map(|i| (cells - 1 - i) as u32).collect();
    tch::manual_seed(seed as i64);
    match o.head.as_str() {
        "spatial" => Model::new(
            &NetConfig {
                policy_head: PolicyHead::Spatial { planes: 73 },
                ..cfg
            },
            dev,
        ),
        "mapped" => Model::with_policy_map(
            &NetConfig {
                policy_head: PolicyHead::Mapped { planes: 73 },
                ..cfg
            },
            dev,
            &map,
        ),
        _ => Model::new(&cfg, dev),
    }
    .expect("model")
}

fn main() {
    let o = parse();
    device::set_threads(1);
    let probe = make_model(&o, 1, 8, 0);
    let cfg0 = probe.config().clone();
    let dev = probe.device();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let max_b = o
        .batches
        .iter()
        .copied()
        .max()
        .unwrap_or(1)
        .max(o.train_batch);
    let per = cfg0.input_len();
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
        let mut moves: Vec<u32> = (0..o.legal)
            .map(|_| (rng.next() % cfg0.policy_size as u64) as u32)
            .collect();
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

    let head = match (&o.variant, &cfg0.policy_head) {
        (_, PolicyHead::Dense { channels }) => format!("dense {channels}-plane"),
        (_, PolicyHead::Spatial { planes }) => format!("spatial {planes}-plane"),
        (_, PolicyHead::Mapped { planes }) => format!("mapped, {planes} planes"),
    };
    println!(
        "nnbench: {}board {}x{}, {} input planes, policy {} ({head} head), {} legal moves/position, device {:?}, median of {} runs",
        o.variant.map(|v| format!("{} net, ", v.name())).unwrap_or_default(),
        cfg0.board_height,
        cfg0.board_width,
        cfg0.input_planes,
        cfg0.policy_size,
        o.legal,
        dev,
        o.reps
    );
    if let Ok(l) = std::fs::read_to_string("/proc/loadavg") {
        let l: Vec<&str> = l.split_whitespace().take(3).collect();
        println!(
            "load average at start: {} ({} cores): numbers drop when other processes hold the cores",
            l.join(" "),
            device::training_threads()
        );
    }
    let precision = o.precision.unwrap_or(probe.inference_precision());
    let min_b = vzero_model::AUTO_BF16_MIN_BATCH;
    println!(
        "inference = Model::evaluate (precision {precision}: batches < {min_b} in {:?}, >= {min_b} in {:?}; CPU AMX-BF16: {}), cells = positions/s (GFLOP/s); train = Trainer::step, SGD momentum, batch {}, samples/s",
        precision.kind_for(dev, 1),
        precision.kind_for(dev, min_b),
        if vzero_model::cpu_has_amx_bf16() { "yes" } else { "no" },
        o.train_batch
    );
    if o.raw {
        println!(
            "--raw: inference = reference forward pass only (no input copy, no masking/softmax)"
        );
    }
    let paths: Vec<(&str, Option<InferencePrecision>)> = if o.compare {
        vec![
            ("ref", None),
            ("f32", Some(InferencePrecision::F32)),
            ("bf16", Some(InferencePrecision::Bf16)),
        ]
    } else if o.raw {
        vec![("raw", None)]
    } else {
        vec![(
            match precision {
                InferencePrecision::Auto => "auto",
                InferencePrecision::F32 => "f32",
                InferencePrecision::Bf16 => "bf16",
            },
            Some(precision),
        )]
    };
    println!();
    let mut header = "| net | params | MFLOP/pos | threads | path |".to_string();
    let mut sep = "|---|---:|---:|---:|---|".to_string();
    for b in &o.batches {
        header += &format!(" b={b} |");
        sep += "---:|";
    }
    if o.train_batch > 0 {
        header += &format!(" train b={} |", o.train_batch);
        sep += "---:|";
    }
    println!("{header}\n{sep}");

    for &(blocks, channels) in &o.nets {
        let model = make_model(&o, blocks, channels, 1);
        let flops = model.config().flops_per_position() as f64;
        let models: Vec<Model> = paths
            .iter()
            .map(|(_, p)| {
                let m = make_model(&o, blocks, channels, 1);
                if let Some(p) = p {
                    m.set_inference_precision(*p);
                }
                m
            })
            .collect();
        for &t in &o.threads {
            device::set_threads(t);
            let mut cells = vec![String::new(); paths.len()];
            for &b in &o.batches {
                let lm = {
                    let mut lm = LegalMoves::with_capacity(b, b * o.legal);
                    for i in 0..b {
                        lm.push(legal.get(i));
                    }
                    lm
                };
                let input = &planes[..b * per];
                let mut outs: Vec<Evaluation> = vec![Evaluation::default(); paths.len()];
                let x = model.input_tensors(b, input, None).expect("input").0;
                let mut fs: Vec<Box<dyn FnMut() + '_>> = Vec::new();
                for ((name, p), (m, out)) in paths.iter().zip(models.iter().zip(outs.iter_mut())) {
                    let lm = &lm;
                    let x = &x;
                    fs.push(match (name, p) {
                        (&"raw", _) => Box::new(move || {
                            tch::no_grad(|| {
                                let o = m.forward_t(x, None, false);
                                let _ = o.wdl.double_value(&[0, 0]);
                            })
                        }),
                        (_, None) => Box::new(move || {
                            m.evaluate_reference_into(input, None, lm, out)
                                .expect("evaluate");
                        }),
                        _ => Box::new(move || {
                            m.evaluate_into(input, None, lm, out).expect("evaluate");
                        }),
                    });
                }
                for (k, rate) in measure(o.reps, b, &mut fs).into_iter().enumerate() {
                    cells[k] += &format!(" {rate:.0} ({:.1}) |", rate * flops / 1e9);
                }
            }
            let train = if o.train_batch > 0 {
                // Training on a copy so inference numbers of later rows use the same weights.
                let train_model = make_model(&o, blocks, channels, 2);
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
                    aux: Default::default(),
                };
                let mut step: Vec<Box<dyn FnMut() + '_>> = vec![Box::new(|| {
                    tr.step(&train_model, &batch).expect("step");
                })];
                format!(" {:.0} |", measure(o.reps, tb, &mut step)[0])
            } else {
                String::new()
            };
            for (k, (name, _)) in paths.iter().enumerate() {
                println!(
                    "| {blocks}x{channels} | {:.2} M | {:.2} | {t} | {name} |{}{}",
                    model.num_parameters() as f64 / 1e6,
                    flops / 1e6,
                    cells[k],
                    if k == 0 { train.as_str() } else { "" }
                );
            }
        }
    }
}
