//! FEN reading and writing in Fairy-Stockfish's dialect: `+` for promoted pieces, hands in
//! `[...]` right after the board, the en-passant square only when a pawn can take, and for
//! Dictator variants a seventh field (see the README).

use crate::bitboard::Bitboard;
use crate::board::{Pos, NO_SQ};
use crate::error::{Error, Result};
use crate::types::{Color, Piece};
use crate::variant::Rules;

fn err(fen: &str, field: &'static str, message: String) -> Error {
    Error::Fen { fen: crate::echo(fen), field, message }
}

/// Parses an algebraic square name on a `files` × `ranks` board.
pub(crate) fn parse_square(s: &str, files: usize, ranks: usize) -> Option<usize> {
    let mut chars = s.chars();
    let f = chars.next()?;
    if !f.is_ascii_lowercase() {
        return None;
    }
    let f = (f as u8 - b'a') as usize;
    let digits: String = chars.collect();
    if digits.is_empty() || digits.len() > 2 || !digits.chars().all(|c| c.is_ascii_digit()) || digits.starts_with('0') {
        return None;
    }
    let r: usize = digits.parse().ok()?;
    if f >= files || r == 0 || r > ranks {
        return None;
    }
    Some((r - 1) * files + f)
}

impl<B: Bitboard> Pos<B> {
    /// Reads a FEN. Every error names the field and the offending text.
    pub fn from_fen(r: &'static Rules<B>, fen: &str) -> Result<Self> {
        let mut pos = Pos::empty(r);
        let fields: Vec<&str> = fen.split_whitespace().collect();
        if fields.is_empty() {
            return Err(err(fen, "board", "empty FEN".into()));
        }
        let max_fields = if r.dictator.is_some() { 7 } else { 6 };
        if fields.len() > max_fields {
            return Err(err(fen, "end", format!("{} fields, at most {max_fields} expected", fields.len())));
        }
        // Board and holdings.
        let (board, holdings) = match fields[0].find('[') {
            Some(i) => {
                let rest = &fields[0][i + 1..];
                let Some(h) = rest.strip_suffix(']') else {
                    return Err(err(fen, "holdings", "'[' without a closing ']' at the end of the board field".into()));
                };
                (&fields[0][..i], Some(h))
            }
            None => (fields[0], None),
        };
        let rows: Vec<&str> = board.split('/').collect();
        if rows.len() != r.ranks {
            return Err(err(fen, "board", format!("{} ranks, expected {}", rows.len(), r.ranks)));
        }
        for (i, row) in rows.iter().enumerate() {
            let rank = r.ranks - 1 - i;
            let mut file = 0usize;
            let chars: Vec<char> = row.chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                if c.is_ascii_digit() {
                    let mut k = j;
                    while k < chars.len() && chars[k].is_ascii_digit() {
                        k += 1;
                    }
                    let n: usize = chars[j..k].iter().collect::<String>().parse().unwrap_or(usize::MAX);
                    if n == 0 || n > r.files {
                        return Err(err(fen, "board", format!("rank {}: bad empty-square count '{}'", rank + 1, chars[j..k].iter().collect::<String>())));
                    }
                    file += n;
                    j = k;
                    continue;
                }
                let promoted = c == '+';
                let letter = if promoted {
                    match chars.get(j + 1) {
                        Some(l) => *l,
                        None => return Err(err(fen, "board", format!("rank {}: '+' at the end of the rank", rank + 1))),
                    }
                } else {
                    c
                };
                if !letter.is_ascii_alphabetic() {
                    return Err(err(fen, "board", format!("rank {}: unexpected character '{letter}'", rank + 1)));
                }
                let color = if letter.is_ascii_uppercase() { Color::White } else { Color::Black };
                let Some(pt) = r.piece_by_letter(letter.to_ascii_lowercase(), promoted) else {
                    let shown = if promoted { format!("+{letter}") } else { letter.to_string() };
                    return Err(err(fen, "board", format!("rank {}: unknown piece '{shown}' in {}", rank + 1, r.def.name)));
                };
                if file >= r.files {
                    return Err(err(fen, "board", format!("rank {} has more than {} files", rank + 1, r.files)));
                }
                let sq = rank * r.files + file;
                if r.royal_types >> pt.0 & 1 != 0 && pos.king[color.index()] != NO_SQ {
                    return Err(err(fen, "board", format!("more than one royal piece for {:?}", color)));
                }
                pos.put(Piece { color, kind: pt }, sq);
                file += 1;
                j += if promoted { 2 } else { 1 };
            }
            if file != r.files {
                return Err(err(fen, "board", format!("rank {} has {file} files, expected {}", rank + 1, r.files)));
            }
        }
        for c in Color::ALL {
            if pos.king[c.index()] == NO_SQ {
                return Err(err(fen, "board", format!("no royal piece for {:?}", c)));
            }
        }
        match (holdings, r.drops) {
            (Some(h), true) => {
                for c in h.chars() {
                    let color = if c.is_ascii_uppercase() { Color::White } else { Color::Black };
                    let pt = r
                        .hand_order
                        .iter()
                        .copied()
                        .find(|pt| r.pieces[pt.index()].letter == c.to_ascii_lowercase())
                        .ok_or_else(|| err(fen, "holdings", format!("'{c}' cannot be held in {}", r.def.name)))?;
                    let n = pos.hand[color.index()][pt.index()];
                    if n as usize >= crate::variant::MAX_HAND - 1 {
                        return Err(err(fen, "holdings", format!("too many '{c}' in hand")));
                    }
                    pos.hand[color.index()][pt.index()] = n + 1;
                }
            }
            (Some(_), false) => return Err(err(fen, "holdings", format!("{} has no pieces in hand", r.def.name))),
            (None, _) => {}
        }
        // Side to move.
        pos.side = match fields.get(1).copied().unwrap_or("w") {
            "w" => Color::White,
            "b" => Color::Black,
            s => return Err(err(fen, "side to move", format!("'{s}' is neither 'w' nor 'b'"))),
        };
        // Castling.
        let castling = fields.get(2).copied().unwrap_or("-");
        if castling != "-" {
            for c in castling.chars() {
                let (color, wing) = match c {
                    'K' => (Color::White, 0),
                    'Q' => (Color::White, 1),
                    'k' => (Color::Black, 0),
                    'q' => (Color::Black, 1),
                    _ => return Err(err(fen, "castling", format!("unexpected character '{c}'"))),
                };
                let Some(wings) = &r.castling else {
                    return Err(err(fen, "castling", format!("{} has no castling", r.def.name)));
                };
                let w = wings[color.index()][wing];
                let rook_ok = pos.piece_at(w.rook_from).is_some_and(|p| p.color == color && r.castle_rook_types >> p.kind.0 & 1 != 0);
                if pos.king[color.index()] as usize != r.castle_king_from[color.index()] || !rook_ok {
                    return Err(err(fen, "castling", format!("right '{c}' without king and rook on their squares")));
                }
                pos.castling |= 1 << (color.index() * 2 + wing);
            }
        }
        // En passant: kept only when a pawn of the side to move could take (FSF's rule).
        let ep = fields.get(3).copied().unwrap_or("-");
        if ep != "-" {
            let sq = parse_square(ep, r.files, r.ranks).ok_or_else(|| err(fen, "en passant", format!("'{ep}' is not a square")))?;
            if pos.can_take_en_passant(sq, pos.side) {
                pos.ep = sq as u8;
            }
            if pos.piece_at(sq).is_some() {
                return Err(err(fen, "en passant", format!("square '{ep}' is occupied")));
            }
        }
        let num = |i: usize, name: &'static str, default: u16| -> Result<u16> {
            match fields.get(i) {
                None => Ok(default),
                Some(s) => s.parse::<u16>().map_err(|_| err(fen, name, format!("'{s}' is not a number"))),
            }
        };
        pos.rule50 = num(4, "halfmove clock", 0)?;
        pos.fullmove = num(5, "fullmove number", 1)?.max(1);
        if let Some(d) = fields.get(6) {
            let (flags, pending) = match d.split_once(':') {
                Some((f, p)) => (f, Some(p)),
                None => (*d, None),
            };
            if flags != "-" {
                for c in flags.chars() {
                    match c {
                        'K' => pos.dictator |= 1,
                        'k' => pos.dictator |= 2,
                        _ => return Err(err(fen, "dictator", format!("unexpected character '{c}' (expected K, k or -)"))),
                    }
                }
            }
            if let Some(p) = pending {
                let sq = parse_square(p, r.files, r.ranks).ok_or_else(|| err(fen, "dictator", format!("'{p}' is not a square")))?;
                if pos.dictator >> pos.side.index() & 1 == 0 {
                    return Err(err(fen, "dictator", "second step pending for a side that is no Dictator".into()));
                }
                pos.pending = sq as u8;
            }
        }
        pos.finish_setup();
        if !pos.checkers_of(pos.side.flip()).is_empty() {
            return Err(err(fen, "board", "the side not to move is in check".into()));
        }
        Ok(pos)
    }

    /// Writes the FEN exactly as Fairy-Stockfish does.
    pub fn fen(&self) -> String {
        let r = self.r;
        let mut s = String::new();
        for rank in (0..r.ranks).rev() {
            let mut empty = 0;
            for file in 0..r.files {
                match self.piece_at(rank * r.files + file) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            s += &empty.to_string();
                            empty = 0;
                        }
                        s += &r.pieces[p.kind.index()].fen(p.color);
                    }
                }
            }
            if empty > 0 {
                s += &empty.to_string();
            }
            if rank > 0 {
                s.push('/');
            }
        }
        if r.drops {
            s.push('[');
            for c in Color::ALL {
                for &pt in &r.hand_order {
                    for _ in 0..self.hand[c.index()][pt.index()] {
                        s += &r.pieces[pt.index()].fen(c);
                    }
                }
            }
            s.push(']');
        }
        s.push(' ');
        s.push(self.side.letter());
        s.push(' ');
        if self.castling == 0 {
            s.push('-');
        } else {
            for (bit, c) in ['K', 'Q', 'k', 'q'].iter().enumerate() {
                if self.castling >> bit & 1 != 0 {
                    s.push(*c);
                }
            }
        }
        s.push(' ');
        if self.ep == NO_SQ {
            s.push('-');
        } else {
            s += &crate::types::Square(self.ep).name(r.files);
        }
        s += &format!(" {} {}", self.rule50, self.fullmove);
        if r.dictator.is_some() && (self.dictator != 0 || self.pending != NO_SQ) {
            s.push(' ');
            if self.dictator & 1 != 0 {
                s.push('K');
            }
            if self.dictator & 2 != 0 {
                s.push('k');
            }
            if self.pending != NO_SQ {
                s.push(':');
                s += &crate::types::Square(self.pending).name(r.files);
            }
        }
        s
    }
}
