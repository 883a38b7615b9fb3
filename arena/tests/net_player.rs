//! The checkpoint player: a tiny untrained network saved and loaded through the checkpoint API
//! drives PUCT and Gumbel searches through whole (short) games.

use vzero_arena::{run_match, MatchConfig, PlayerSpec};
use vzero_encoding::{InputEncoder, MoveEncoder};
use vzero_model::{checkpoint, Device, Model, NetConfig, PolicyHead};
use vzero_rules::Variant;

#[test]
fn net_players_play_games() {
    let v = Variant::builtin("empire").unwrap();
    let (inp, mv) = (InputEncoder::new(v), MoveEncoder::new(v));
    let mut cfg = NetConfig::with_size(inp.num_planes(), inp.height(), inp.width(), mv.len(), 1, 8);
    cfg.policy_head = PolicyHead::Dense { channels: 1 };
    vzero_model::set_threads(1);
    let model = Model::new_seeded(&cfg, Device::Cpu, 7).unwrap();
    let dir = std::env::temp_dir().join(format!("vzero-arena-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stem = dir.join("tiny");
    let info = vzero_model::checkpoint_info(v, 0, 0, None);
    checkpoint::save(&model, &stem, &info).unwrap();

    let mut mc = MatchConfig::new(v);
    mc.games = 2;
    mc.max_plies = 30;
    let puct = PlayerSpec::parse(&format!("net:{}:16", stem.display())).unwrap();
    let gumbel = PlayerSpec::parse(&format!("net:{}.json:gumbel:8", stem.display())).unwrap();
    assert_eq!(gumbel.name(), "net:tiny:gumbel:8");
    let r = run_match(&puct, &gumbel, &mc).unwrap();
    assert_eq!(r.stats.games(), 2);
    assert!(r.games.iter().all(|g| g.termination != "forfeit"), "{:?}", r.games.iter().map(|g| g.pgn.tag("TerminationDetails")).collect::<Vec<_>>());

    // a checkpoint of another variant is refused when the player is built
    let shogun = Variant::builtin("shogun").unwrap();
    let e = puct.build(shogun, 0).err().expect("variant mismatch");
    assert!(format!("{e:#}").contains("variant"), "{e:#}");
    let _ = std::fs::remove_dir_all(&dir);
}
