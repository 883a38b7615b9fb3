//! Betza notation: piece movement as atoms with modifiers (`mQcN`, `fmWfceF`, `fsW`).
//!
//! Supported: atoms `W F D N A H C Z G K R B Q`, a doubled `W`/`F` as a rider (`WW` = `R`),
//! modifiers `m` (quiet only), `c` (capture only), `f b s v l r` (directions relative to the
//! mover), and `e` (en passant, governed by the variant's pawn rules and otherwise ignored).

/// One movement component: a set of vectors, leaping or sliding.
#[derive(Clone, Debug, PartialEq)]
pub struct Atom {
    /// Vectors `(dx, dy)`, `dy > 0` towards the opponent.
    pub vectors: Vec<(i32, i32)>,
    /// Slides any distance along each vector.
    pub rider: bool,
    /// Used for quiet moves.
    pub quiet: bool,
    /// Used for captures.
    pub capture: bool,
}

fn base_vector(atom: char) -> Option<(i32, i32)> {
    Some(match atom {
        'W' => (1, 0),
        'F' => (1, 1),
        'D' => (2, 0),
        'N' => (2, 1),
        'A' => (2, 2),
        'H' => (3, 0),
        'C' => (3, 1),
        'Z' => (3, 2),
        'G' => (3, 3),
        _ => return None,
    })
}

fn symmetric(v: (i32, i32)) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    for (a, b) in [(v.0, v.1), (v.1, v.0)] {
        for sa in [1, -1] {
            for sb in [1, -1] {
                let w = (a * sa, b * sb);
                if !out.contains(&w) {
                    out.push(w);
                }
            }
        }
    }
    out
}

fn direction_ok(mods: &str, (dx, dy): (i32, i32)) -> bool {
    let dirs: Vec<char> = mods.chars().filter(|c| "fbsvlr".contains(*c)).collect();
    if dirs.is_empty() {
        return true;
    }
    dirs.iter().any(|d| match d {
        'f' => dy > 0,
        'b' => dy < 0,
        's' => dx.abs() > dy.abs() || (dy == 0),
        'v' => dy.abs() > dx.abs() || (dx == 0),
        'l' => dx < 0,
        'r' => dx > 0,
        _ => false,
    })
}

/// Parses a Betza string into atoms.
pub fn parse(betza: &str) -> Result<Vec<Atom>, String> {
    let chars: Vec<char> = betza.chars().collect();
    let mut atoms = Vec::new();
    let mut i = 0;
    if chars.is_empty() {
        return Err("empty Betza string".into());
    }
    while i < chars.len() {
        let start = i;
        while i < chars.len() && chars[i].is_ascii_lowercase() {
            if !"mcfbsvlre".contains(chars[i]) {
                return Err(format!("unsupported Betza modifier '{}' at position {}", chars[i], i + 1));
            }
            i += 1;
        }
        let mods: String = chars[start..i].iter().collect();
        let Some(&atom) = chars.get(i) else {
            return Err(format!("Betza modifiers '{mods}' at the end have no atom"));
        };
        i += 1;
        let (bases, mut rider): (Vec<(i32, i32)>, bool) = match atom {
            'K' => (vec![(1, 0), (1, 1)], false),
            'R' => (vec![(1, 0)], true),
            'B' => (vec![(1, 1)], true),
            'Q' => (vec![(1, 0), (1, 1)], true),
            a => match base_vector(a) {
                Some(v) => (vec![v], false),
                None => return Err(format!("unknown Betza atom '{a}' at position {i}")),
            },
        };
        if chars.get(i) == Some(&atom) {
            rider = true;
            i += 1;
        }
        if rider && bases.iter().any(|&(a, b)| a > 1 || b > 1) {
            return Err(format!("rider '{atom}{atom}' is not supported: only W and F slide"));
        }
        if chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
            return Err(format!("range limits ('{}' after '{atom}') are not supported", chars[i]));
        }
        let only_m = mods.contains('m');
        let only_c = mods.contains('c');
        let vectors: Vec<(i32, i32)> = bases
            .iter()
            .flat_map(|&b| symmetric(b))
            .filter(|&v| direction_ok(&mods, v))
            .collect();
        if vectors.is_empty() {
            return Err(format!("'{mods}{atom}' has no direction left"));
        }
        atoms.push(Atom { vectors, rider, quiet: !only_c || only_m, capture: !only_m || only_c });
    }
    Ok(atoms)
}

/// Whether a piece with these atoms moves as its own mirror image across the board's middle
/// file: every vector `(dx, dy)` (with its sliding and its quiet and capture use) has its partner
/// `(−dx, dy)`, counting over all atoms (`lW` with `rW` is symmetric, `lW` alone is not).
pub fn mirror_symmetric(atoms: &[Atom]) -> bool {
    let moves: Vec<((i32, i32), bool, bool, bool)> =
        atoms.iter().flat_map(|a| a.vectors.iter().map(move |&v| (v, a.rider, a.quiet, a.capture))).collect();
    moves.iter().all(|&((dx, dy), rider, quiet, capture)| moves.contains(&((-dx, dy), rider, quiet, capture)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pawn_splits_quiet_and_capture() {
        let a = parse("fmWfceF").unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].vectors, vec![(0, 1)]);
        assert!(a[0].quiet && !a[0].capture);
        let mut caps = a[1].vectors.clone();
        caps.sort();
        assert_eq!(caps, vec![(-1, 1), (1, 1)]);
        assert!(!a[1].quiet && a[1].capture);
    }

    #[test]
    fn queen_mover_rook_capturer() {
        let a = parse("mQcR").unwrap();
        assert_eq!(a[0].vectors.len(), 8);
        assert!(a[0].rider && a[0].quiet && !a[0].capture);
        assert_eq!(a[1].vectors.len(), 4);
        assert!(a[1].rider && a[1].capture && !a[1].quiet);
    }

    #[test]
    fn soldier_and_gold() {
        let mut s = parse("fsW").unwrap()[0].vectors.clone();
        s.sort();
        assert_eq!(s, vec![(-1, 0), (0, 1), (1, 0)]);
        let g = parse("WfF").unwrap();
        assert_eq!(g[0].vectors.len() + g[1].vectors.len(), 6);
        assert_eq!(parse("N").unwrap()[0].vectors.len(), 8);
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse("").is_err());
        assert!(parse("X").is_err());
        assert!(parse("mz").is_err());
        assert!(parse("NN").is_err());
        assert!(parse("m").is_err());
        assert!(parse("W3").is_err());
    }

    #[test]
    fn mirror_symmetry_needs_every_vector_and_its_partner() {
        for sym in ["fmWfceF", "mQcN", "K", "lWrW", "fsW", "vRsW", "flNfrN"] {
            assert!(mirror_symmetric(&parse(sym).unwrap()), "{sym}");
        }
        for asym in ["lW", "rF", "fWlW", "flN", "mlWcrW"] {
            assert!(!mirror_symmetric(&parse(asym).unwrap()), "{asym}");
        }
    }
}
