//! Game analysis (`vzero analyse`): every position of a game searched by the engine's searcher
//! ([`Thinker`], with tree reuse along the game), each move annotated with the evaluation after
//! it (W/D/L and a centipawn-like score from White's side), the best move and its principal
//! variation when the move played differs, and a judgement by the loss of expected score.
//!
//! **Judgements.** A move's loss is the mover's expected score (W + D/2, from the search before
//! the move) minus its expected score after the move (from the search of the next position, for
//! the same player). Thresholds, as lichess's on its winning-chance scale (−1..1) halved:
//! inaccuracy ≥ [`INACCURACY`] (0.05), mistake ≥ [`MISTAKE`] (0.10), blunder ≥ [`BLUNDER`]
//! (0.15). A move the solver proves to keep a won game won is never judged.
//!
//! Outputs: annotated PGN (`{ [%eval 0.35] [%wdl 420 310 270] Mistake. d7d5 was best: d7d5 … }`
//! with the NAGs `$6` / `$2` / `$4`), CSV (one row per move) and an SVG evaluation graph (one
//! panel per game).

use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;
use vzero_mcts::Proof;
use vzero_rules::{Color, Game, Move, Outcome, Position};

use crate::think::{expected_score, wdl_permille, GoLimits, Score, Thinker};

/// Loss of expected score from which a move is an inaccuracy.
pub const INACCURACY: f32 = 0.05;
/// … a mistake.
pub const MISTAKE: f32 = 0.10;
/// … a blunder.
pub const BLUNDER: f32 = 0.15;

/// How bad a move was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Judgement {
    /// Lost at least [`INACCURACY`].
    Inaccuracy,
    /// Lost at least [`MISTAKE`].
    Mistake,
    /// Lost at least [`BLUNDER`].
    Blunder,
}

impl Judgement {
    /// The judgement of a loss of expected score, if any.
    pub fn of(loss: f32) -> Option<Judgement> {
        if loss >= BLUNDER {
            Some(Judgement::Blunder)
        } else if loss >= MISTAKE {
            Some(Judgement::Mistake)
        } else if loss >= INACCURACY {
            Some(Judgement::Inaccuracy)
        } else {
            None
        }
    }

    /// `Inaccuracy`, `Mistake`, `Blunder`.
    pub fn name(self) -> &'static str {
        match self {
            Judgement::Inaccuracy => "Inaccuracy",
            Judgement::Mistake => "Mistake",
            Judgement::Blunder => "Blunder",
        }
    }

    /// The PGN NAG: `$6` (?!), `$2` (?), `$4` (??).
    pub fn nag(self) -> &'static str {
        match self {
            Judgement::Inaccuracy => "$6",
            Judgement::Mistake => "$2",
            Judgement::Blunder => "$4",
        }
    }
}

/// The evaluation of one position for the side to move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PositionEval {
    /// Side to move.
    pub stm: Color,
    /// W − L for the side to move.
    pub value: f32,
    /// Draw probability.
    pub draw: f32,
    /// Proven value for the side to move, or the result of a finished game.
    pub proof: Option<Proof>,
}

impl PositionEval {
    /// Expected score of `who`.
    pub fn expected_for(&self, who: Color) -> f32 {
        let e = expected_score(self.value);
        if who == self.stm {
            e
        } else {
            1.0 - e
        }
    }

    /// The score from White's side (`cp`, or `mate` when proven).
    pub fn white_score(&self) -> Score {
        let s = crate::think::score(self.value, self.proof);
        match (s, self.stm) {
            (_, Color::White) => s,
            (Score::Cp(c), Color::Black) => Score::Cp(-c),
            (Score::Mate(m), Color::Black) => Score::Mate(-m),
        }
    }

    /// W/D/L per mille from White's side.
    pub fn white_wdl(&self) -> [u32; 3] {
        let [w, d, l] = wdl_permille(self.value, self.draw);
        if self.stm == Color::White {
            [w, d, l]
        } else {
            [l, d, w]
        }
    }
}

/// One analysed move.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveAnalysis {
    /// Ply from the start of the game (1 = first move).
    pub ply: usize,
    /// The move played, in UCI notation.
    pub uci: String,
    /// Who played it.
    pub mover: Color,
    /// The evaluation of the position after the move.
    pub after: PositionEval,
    /// Loss of the mover's expected score by this move (≥ 0).
    pub loss: f32,
    /// The judgement of the loss.
    pub judgement: Option<Judgement>,
    /// The engine's best move and its principal variation (UCI), when it differs from the move.
    pub best: Option<(String, Vec<String>)>,
}

/// One analysed game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameAnalysis {
    /// The evaluation of the start position.
    pub start: PositionEval,
    /// Every move.
    pub moves: Vec<MoveAnalysis>,
}

impl GameAnalysis {
    /// Moves of `side` with each judgement: (inaccuracies, mistakes, blunders).
    pub fn counts(&self, side: Color) -> (usize, usize, usize) {
        let of = |j| self.moves.iter().filter(|m| m.mover == side && m.judgement == Some(j)).count();
        (of(Judgement::Inaccuracy), of(Judgement::Mistake), of(Judgement::Blunder))
    }

    /// Mean loss of expected score of `side`'s moves.
    pub fn mean_loss(&self, side: Color) -> f32 {
        let l: Vec<f32> = self.moves.iter().filter(|m| m.mover == side).map(|m| m.loss).collect();
        if l.is_empty() {
            0.0
        } else {
            l.iter().sum::<f32>() / l.len() as f32
        }
    }
}

fn terminal_eval(game: &Game) -> PositionEval {
    let stm = game.position().side_to_move();
    let (value, draw, proof) = match game.result().outcome {
        Outcome::Win => (1.0, 0.0, Proof::Win(0)),
        Outcome::Loss => (-1.0, 0.0, Proof::Loss(0)),
        _ => (0.0, 1.0, Proof::Draw(0)),
    };
    PositionEval { stm, value, draw, proof: Some(proof) }
}

/// Analyses the game from `start` through `moves` (legal), searching every position within
/// `limits`; `progress` is called after each position.
pub fn analyse_game(thinker: &mut Thinker, start: &Position, moves: &[Move], limits: &GoLimits, progress: &mut dyn FnMut()) -> Result<GameAnalysis> {
    let stop = AtomicBool::new(false);
    let mut game = Game::new(*start);
    let mut evals = Vec::with_capacity(moves.len() + 1);
    let mut bests = Vec::with_capacity(moves.len() + 1);
    for i in 0..=moves.len() {
        match thinker.think(&game, limits, &stop, None, Duration::from_secs(3600), &mut |_| {})? {
            None => {
                evals.push(terminal_eval(&game));
                bests.push(None);
            }
            Some(r) => {
                let l = &r.lines[0];
                let stm = game.position().side_to_move();
                evals.push(PositionEval { stm, value: l.q, draw: l.draw, proof: r.proof.or(l.proof) });
                bests.push(Some(l.pv.clone()));
            }
        }
        progress();
        if i < moves.len() {
            game.play(moves[i]);
        }
    }
    let mut pos = *start;
    let mut out = Vec::with_capacity(moves.len());
    for (i, &m) in moves.iter().enumerate() {
        let mover = pos.side_to_move();
        let before = evals[i];
        let after = evals[i + 1];
        let kept_win = matches!(before.proof, Some(Proof::Win(_))) && matches!(after.proof, Some(p) if (after.stm == mover) == matches!(p, Proof::Win(_)));
        let loss = (before.expected_for(mover) - after.expected_for(mover)).max(0.0);
        let judgement = if kept_win { None } else { Judgement::of(loss) };
        let best = bests[i].as_ref().filter(|pv| pv.first() != Some(&m)).map(|pv| {
            let line = crate::uci_server::uci_line(&pos, pv);
            let ucis: Vec<String> = line.split_whitespace().map(str::to_string).collect();
            (ucis[0].clone(), ucis)
        });
        out.push(MoveAnalysis { ply: i + 1, uci: pos.uci(m), mover, after, loss, judgement, best });
        pos.play(m);
    }
    Ok(GameAnalysis { start: evals[0], moves: out })
}

/// `[%eval 0.35]` / `[%eval #3]` (pawns from White's side, as lichess writes it).
pub fn eval_tag(e: &PositionEval) -> String {
    match e.white_score() {
        Score::Cp(c) => format!("[%eval {:.2}]", f64::from(c) / 100.0),
        Score::Mate(m) => format!("[%eval #{m}]"),
    }
}

/// The game as annotated PGN: `tags` (name, value) as given, then the movetext with a comment
/// after every move (evaluation, W/D/L, judgement, best line) and NAGs for bad moves.
pub fn annotated_pgn(tags: &[(String, String)], start: &Position, a: &GameAnalysis, result: &str) -> String {
    let mut s = String::new();
    for (k, v) in tags {
        let _ = writeln!(s, "[{k} \"{}\"]", vzero_rules::pgn::escape_tag_value(v));
    }
    s.push('\n');
    let mut tokens: Vec<String> = Vec::new();
    let ucis: Vec<&str> = a.moves.iter().map(|m| m.uci.as_str()).collect();
    let turns = vzero_rules::pgn::turn_numbers(start, &ucis);
    let mut prev: Option<Color> = None;
    for (m, &(num, side)) in a.moves.iter().zip(&turns) {
        tokens.extend(vzero_rules::pgn::move_number(prev, num, side));
        tokens.push(m.uci.clone());
        if let Some(j) = m.judgement {
            tokens.push(j.nag().to_string());
        }
        let [w, d, l] = m.after.white_wdl();
        let mut c = format!("{{ {} [%wdl {w} {d} {l}]", eval_tag(&m.after));
        if let Some(j) = m.judgement {
            let _ = write!(c, " {}.", j.name());
        }
        if let Some((best, pv)) = &m.best {
            let _ = write!(c, " Best {best}: {}", pv.join(" "));
        }
        c.push_str(" }");
        tokens.extend(c.split(' ').map(str::to_string));
        prev = Some(side);
    }
    tokens.push(result.to_string());
    vzero_rules::pgn::push_movetext(&mut s, tokens);
    s
}

/// The CSV header of [`csv_rows`].
pub const CSV_HEADER: &str = "game,ply,move,mover,white_win,white_draw,white_loss,white_score,expected_loss,judgement,best,best_pv\n";

/// One CSV row per move of game number `game` (W/D/L per mille and the score from White's side
/// after the move).
pub fn csv_rows(game: usize, a: &GameAnalysis) -> String {
    let mut s = String::new();
    for m in &a.moves {
        let [w, d, l] = m.after.white_wdl();
        let (best, pv) = m.best.as_ref().map_or((String::new(), String::new()), |(b, p)| (b.clone(), p.join(" ")));
        let _ = writeln!(
            s,
            "{game},{},{},{},{w},{d},{l},{},{:.4},{},{best},{pv}",
            m.ply,
            m.uci,
            if m.mover == Color::White { "white" } else { "black" },
            m.after.white_score().to_string().replace(' ', ":"),
            m.loss,
            m.judgement.map_or("", Judgement::name),
        );
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// An SVG evaluation graph: one panel per game (title, White's expected score over the plies
/// from 0 to 1 with the 50% line, markers for inaccuracies, mistakes and blunders, and a legend).
pub fn eval_svg(games: &[(String, &GameAnalysis)]) -> String {
    let (w, ph, left, top) = (900.0, 220.0, 60.0, 40.0);
    let plot_w = w - left - 30.0;
    let plot_h = ph - 70.0;
    let height = top + ph * games.len().max(1) as f64;
    let mut s = String::new();
    let _ = writeln!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" font-family="sans-serif" font-size="13">"#);
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let legend = [("#e6b800", "inaccuracy"), ("#f07800", "mistake"), ("#d00000", "blunder")];
    let _ = writeln!(s, r#"<text x="10" y="22" font-size="16" font-weight="bold">Evaluation (White's expected score)</text>"#);
    for (i, (c, t)) in legend.iter().enumerate() {
        let x = 420.0 + i as f64 * 130.0;
        let _ = writeln!(s, r#"<circle cx="{x}" cy="17" r="5" fill="{c}"/><text x="{}" y="22">{t}</text>"#, x + 10.0);
    }
    for (gi, (title, a)) in games.iter().enumerate() {
        let y0 = top + ph * gi as f64 + 30.0;
        let _ = writeln!(s, r#"<text x="{left}" y="{}" font-weight="bold">{}</text>"#, y0 - 8.0, esc(title));
        let _ = writeln!(s, r##"<rect x="{left}" y="{y0}" width="{plot_w}" height="{plot_h}" fill="#f7f7f7" stroke="#888"/>"##);
        for (frac, label) in [(0.0, "1"), (0.5, "½"), (1.0, "0")] {
            let y = y0 + plot_h * frac;
            let _ = writeln!(s, r##"<line x1="{left}" y1="{y}" x2="{}" y2="{y}" stroke="#bbb" stroke-dasharray="4 3"/><text x="{}" y="{}" text-anchor="end">{label}</text>"##, left + plot_w, left - 6.0, y + 4.0);
        }
        let n = a.moves.len().max(1) as f64;
        let xy = |ply: usize, e: &PositionEval| (left + plot_w * ply as f64 / n, y0 + plot_h * (1.0 - f64::from(e.expected_for(Color::White))));
        let mut pts = vec![xy(0, &a.start)];
        pts.extend(a.moves.iter().map(|m| xy(m.ply, &m.after)));
        let path: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(s, r##"<polyline points="{}" fill="none" stroke="#1f4e9e" stroke-width="2"/>"##, path.join(" "));
        for m in &a.moves {
            if let Some(j) = m.judgement {
                let (x, y) = xy(m.ply, &m.after);
                let c = legend[j as usize].0;
                let _ = writeln!(s, r#"<circle cx="{x:.1}" cy="{y:.1}" r="4.5" fill="{c}"><title>ply {} {} {}</title></circle>"#, m.ply, m.uci, j.name());
            }
        }
        let ticks = (a.moves.len() / 10).max(1);
        for ply in (0..=a.moves.len()).step_by(ticks.max(1) * if a.moves.len() > 100 { 2 } else { 1 }) {
            let x = left + plot_w * ply as f64 / n;
            let _ = writeln!(s, r#"<text x="{x:.1}" y="{}" text-anchor="middle" font-size="11">{ply}</text>"#, y0 + plot_h + 14.0);
        }
        let _ = writeln!(s, r#"<text x="{}" y="{}" text-anchor="middle" font-size="11">ply</text>"#, left + plot_w / 2.0, y0 + plot_h + 28.0);
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Evaluator;
    use crate::think::ThinkConfig;
    use vzero_mcts::MaterialEvaluator;
    use vzero_rules::Variant;

    #[test]
    fn judgements_follow_the_thresholds() {
        assert_eq!(Judgement::of(0.04), None);
        assert_eq!(Judgement::of(0.05), Some(Judgement::Inaccuracy));
        assert_eq!(Judgement::of(0.12), Some(Judgement::Mistake));
        assert_eq!(Judgement::of(0.5), Some(Judgement::Blunder));
    }

    #[test]
    fn a_hung_piece_is_a_blunder() {
        // Black's rook, attacked along the d-file, goes to d2 where rook and king take it.
        let v = Variant::builtin("shogun").unwrap();
        let start = Position::from_fen(v, "4k3/8/8/3r4/8/8/8/3RK3[] b - - 0 1").unwrap();
        let mut game = Game::new(start);
        game.play_uci("d5d2").unwrap();
        let mut t = Thinker::new(vec![Evaluator::Material(MaterialEvaluator::default())], ThinkConfig::default(), 0);
        let limits = GoLimits { nodes: Some(400), ..GoLimits::default() };
        let a = analyse_game(&mut t, &start, game.moves(), &limits, &mut || {}).unwrap();
        assert_eq!(a.moves.len(), 1);
        let m = &a.moves[0];
        assert_eq!(m.uci, "d5d2");
        assert!(m.judgement >= Some(Judgement::Mistake), "{m:?}");
        assert!(m.best.is_some());
        let pgn = annotated_pgn(&[("Variant".into(), "shogun".into())], &start, &a, "*");
        assert!(pgn.contains("1... d5d2 $") && pgn.contains("[%eval "), "{pgn}");
        assert!(eval_svg(&[("test".into(), &a)]).contains("<polyline"));
        assert!(csv_rows(1, &a).starts_with("1,1,d5d2,black,"));
    }

    /// A spqr Dictator's double move keeps its turn number in the annotated PGN (one `n.` per
    /// White turn, none before a side's second move), and the PGN reads back move for move.
    #[test]
    fn double_moves_keep_their_turn_number_in_annotated_pgn() {
        use rand::{seq::SliceRandom, SeedableRng};
        let v = Variant::builtin("spqr").unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let game = (0..200)
            .find_map(|_| {
                // two bare Dictator kings: nearly every turn is a double move or a pass
                let mut g = Game::new(Position::from_fen(v, "5k6/12/12/12/12/12/12/12/12/12/12/6K5 w - - 0 7 Kk").unwrap());
                let mut doubles = 0;
                while g.moves().len() < 12 && !g.result().is_over() {
                    let before = g.position().side_to_move();
                    let moves = g.position().legal_moves();
                    g.play(*moves.choose(&mut rng).unwrap());
                    doubles += usize::from(g.position().side_to_move() == before);
                }
                (doubles >= 3 && g.moves().len() == 12).then_some(g)
            })
            .expect("random spqr games with double moves");
        let mut t = Thinker::new(vec![Evaluator::Material(MaterialEvaluator::default())], ThinkConfig::default(), 0);
        let limits = GoLimits { nodes: Some(16), ..GoLimits::default() };
        let a = analyse_game(&mut t, game.start(), game.moves(), &limits, &mut || {}).unwrap();
        let pgn = annotated_pgn(&[("Variant".into(), "spqr".into()), ("FEN".into(), game.start().fen())], game.start(), &a, "*");
        let mut want = Vec::new();
        let (mut pos, mut last) = (*game.start(), None);
        for &m in game.moves() {
            let side = pos.side_to_move();
            if side == Color::White && last != Some(side) {
                want.push(format!("{}.", pos.fullmove_number()));
            }
            last = Some(side);
            pos.play(m);
        }
        let movetext = pgn.split("\n\n").nth(1).unwrap();
        let mut depth = 0;
        let got: Vec<&str> = movetext
            .split_whitespace()
            .filter(|t| {
                depth += i32::from(t.starts_with('{'));
                let keep = depth == 0 && t.ends_with('.') && t.starts_with(|c: char| c.is_ascii_digit());
                depth -= i32::from(t.ends_with('}'));
                keep
            })
            .collect();
        assert_eq!(got, want, "{pgn}");
        let read = vzero_rules::pgn::parse_pgn(&pgn, "t.pgn").unwrap();
        assert_eq!(read[0].moves, game.uci_moves(), "{pgn}");
    }
}
