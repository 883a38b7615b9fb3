//! PGN in the form pychess and Fairy-Stockfish use for variants: seven-tag roster plus
//! `[Variant "empire"]`, `[FEN "…"]` and `[SetUp "1"]` when the game does not start from the
//! variant's start position, and `[Termination "…"]`. Moves are written in UCI notation
//! (Fairy-Stockfish's: `e2e4`, `a7a8q`, `c8h3+`, `P@e4`, `0000`), which FSF reads back.
//!
//! The reader takes any number of games per file: tag pairs, then movetext with move numbers
//! (`12.`, `12...`), comments (`{…}`, `; …`), NAGs (`$1`) and variations (`(…)`, skipped), ended
//! by a result token (`1-0`, `0-1`, `1/2-1/2`, `*`). Errors name the file and line. Tag pairs
//! (`[Name "value"]`, `\"` and `\\` escaped) are read and written by one pair of functions.

use std::fmt::Write as _;
use std::path::Path;

/// A game's moves that do not replay: which ply (0: the `FEN` tag), as written, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}", if *.ply == 0 { .error.to_string() } else { format!("move {} ({}): {}", .ply, crate::echo(.text), .error) })]
pub struct PgnReplayError {
    pub ply: usize,
    pub text: String,
    pub error: crate::Error,
}

/// One game as read from or written to PGN.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PgnGame {
    /// Tag pairs in file order.
    pub tags: Vec<(String, String)>,
    /// Moves as written (UCI for files vzero writes).
    pub moves: Vec<String>,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: String,
}

/// A PGN reading error, naming where.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct PgnError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl PgnGame {
    /// The value of tag `name`.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Sets (or adds) tag `name`.
    pub fn set_tag(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self.tags.iter_mut().find(|(k, _)| k == name) {
            Some(t) => t.1 = value,
            None => self.tags.push((name.to_string(), value)),
        }
    }

    /// White's score: 1, ½, 0, or `None` for an unfinished game.
    pub fn white_score(&self) -> Option<f64> {
        match self.result.as_str() {
            "1-0" => Some(1.0),
            "0-1" => Some(0.0),
            "1/2-1/2" => Some(0.5),
            _ => None,
        }
    }

    /// Replays the moves (UCI) from the `FEN` tag or the variant's start position.
    pub fn replay(&self, variant: crate::Variant) -> Result<crate::Game, PgnReplayError> {
        let mut g = match self.tag("FEN") {
            Some(f) => crate::Game::from_fen(variant, f).map_err(|e| PgnReplayError { ply: 0, text: f.to_string(), error: e })?,
            None => crate::Game::startpos(variant),
        };
        for (i, m) in self.moves.iter().enumerate() {
            g.play_uci(m).map_err(|e| PgnReplayError { ply: i + 1, text: m.clone(), error: e })?;
        }
        Ok(g)
    }

    /// The game as PGN text (tags, a blank line, movetext wrapped at 80 columns, a blank line).
    /// `first_ply_black` numbers the moves from a position with Black to move; `fullmove` is the
    /// number of the first move.
    pub fn to_pgn(&self, fullmove: u32, first_ply_black: bool) -> String {
        let mut s = String::new();
        for (k, v) in &self.tags {
            let v = escape_tag_value(v);
            let _ = writeln!(s, "[{k} \"{v}\"]");
        }
        s.push('\n');
        let mut tokens = Vec::new();
        let mut num = fullmove.max(1);
        let mut black = first_ply_black;
        for (i, m) in self.moves.iter().enumerate() {
            if !black {
                tokens.push(format!("{num}."));
            } else if i == 0 {
                tokens.push(format!("{num}..."));
            }
            tokens.push(m.clone());
            if black {
                num += 1;
            }
            black = !black;
        }
        tokens.push(self.result.clone());
        push_movetext(&mut s, tokens);
        s
    }
}

/// Appends movetext tokens to `s`, separated by spaces and wrapped before column 80, then a
/// blank line.
pub fn push_movetext(s: &mut String, tokens: impl IntoIterator<Item = String>) {
    let mut line = String::new();
    for t in tokens {
        if !line.is_empty() && line.len() + 1 + t.len() > 79 {
            s.push_str(&line);
            s.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&t);
    }
    s.push_str(&line);
    s.push_str("\n\n");
}

fn is_result(t: &str) -> bool {
    matches!(t, "1-0" | "0-1" | "1/2-1/2" | "*")
}

/// Parses PGN text; `file` names the source in errors.
pub fn parse_pgn(text: &str, file: &str) -> Result<Vec<PgnGame>, PgnError> {
    let err = |line: usize, message: String| PgnError { file: file.to_string(), line, message };
    let mut games = Vec::new();
    let mut cur = PgnGame::default();
    let mut in_moves = false;
    let mut started = false; // anything seen for the current game
    let mut start_line = 0;
    let mut comment_depth = false; // inside { }
    let mut var_depth = 0usize;
    for (ln0, raw) in text.lines().enumerate() {
        let ln = ln0 + 1;
        let line = raw.trim_end_matches('\r');
        let trimmed = line.trim();
        if !comment_depth && var_depth == 0 && trimmed.starts_with('[') {
            if in_moves {
                return Err(err(ln, format!("tag pair inside movetext (missing result token for the game started on line {start_line})")));
            }
            let (name, v) = parse_tag_pair(trimmed).map_err(|e| err(ln, e))?;
            if !started {
                start_line = ln;
            }
            started = true;
            cur.tags.push((name.to_string(), v));
            continue;
        }
        if trimmed.starts_with('%') {
            continue; // escape line
        }
        // movetext
        let mut chars = line.char_indices().peekable();
        let mut token = String::new();
        let flush = |token: &mut String, cur: &mut PgnGame, games: &mut Vec<PgnGame>, started: &mut bool, in_moves: &mut bool| -> Result<(), PgnError> {
            if token.is_empty() {
                return Ok(());
            }
            let t = std::mem::take(token);
            if is_result(&t) {
                cur.result = t;
                if let Some(tr) = cur.tag("Result") {
                    if tr != cur.result && tr != "*" {
                        return Err(err(ln, format!("result token {} differs from the Result tag {tr}", cur.result)));
                    }
                }
                games.push(std::mem::take(cur));
                *started = false;
                *in_moves = false;
                return Ok(());
            }
            if t.starts_with('$') {
                return Ok(());
            }
            // move number: digits followed by dots, possibly glued to the move (1.e2e4)
            let body: &str = match t.find('.') {
                Some(i) if i > 0 && t[..i].bytes().all(|b| b.is_ascii_digit()) => t[i..].trim_start_matches('.'),
                _ if t.bytes().all(|b| b.is_ascii_digit()) => "",
                _ => &t,
            };
            let mv = body.trim_end_matches(['!', '?']);
            if mv.is_empty() {
                return Ok(());
            }
            *started = true;
            *in_moves = true;
            cur.moves.push(mv.to_string());
            Ok(())
        };
        while let Some((_, c)) = chars.next() {
            if comment_depth {
                if c == '}' {
                    comment_depth = false;
                }
                continue;
            }
            match c {
                '{' => {
                    flush(&mut token, &mut cur, &mut games, &mut started, &mut in_moves)?;
                    comment_depth = true;
                }
                ';' => {
                    flush(&mut token, &mut cur, &mut games, &mut started, &mut in_moves)?;
                    break;
                }
                '(' => {
                    flush(&mut token, &mut cur, &mut games, &mut started, &mut in_moves)?;
                    var_depth += 1;
                }
                ')' => {
                    if var_depth == 0 {
                        return Err(err(ln, "')' without '('".into()));
                    }
                    token.clear();
                    var_depth -= 1;
                }
                c if c.is_whitespace() => {
                    if var_depth > 0 {
                        token.clear();
                    } else {
                        if !started && !token.is_empty() {
                            start_line = ln;
                        }
                        flush(&mut token, &mut cur, &mut games, &mut started, &mut in_moves)?;
                    }
                }
                c => {
                    if var_depth == 0 {
                        token.push(c);
                    }
                }
            }
        }
        if var_depth == 0 {
            if !started && !token.is_empty() {
                start_line = ln;
            }
            flush(&mut token, &mut cur, &mut games, &mut started, &mut in_moves)?;
        }
    }
    let last = text.lines().count();
    if comment_depth {
        return Err(err(last, "unterminated '{' comment".into()));
    }
    if var_depth > 0 {
        return Err(err(last, "unterminated '(' variation".into()));
    }
    if started {
        return Err(err(last, format!("game starting on line {start_line} has no result token (1-0, 0-1, 1/2-1/2 or *)")));
    }
    Ok(games)
}

/// Reads every game of a PGN file (an unreadable file is an error on its line 0).
pub fn read_pgn_file(path: &Path) -> Result<Vec<PgnGame>, PgnError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| PgnError { file: file.clone(), line: 0, message: e.to_string() })?;
    parse_pgn(&text, &file)
}
/// Parses one tag-pair line (`[Name "value"]`, already trimmed) into its name and unescaped
/// value (`\"` and `\\`). The error says what is wrong, for the caller to place (file, line).
pub fn parse_tag_pair(trimmed: &str) -> Result<(&str, String), String> {
    let inner = trimmed.strip_prefix('[').and_then(|x| x.strip_suffix(']'));
    let Some((name, rest)) = inner.and_then(|i| i.split_once(char::is_whitespace)) else {
        return Err(format!("malformed tag pair '{trimmed}'"));
    };
    let Some(value) = rest.trim().strip_prefix('"').and_then(|x| x.strip_suffix('"')) else {
        return Err(format!("tag {name}: value must be in double quotes"));
    };
    let mut v = String::with_capacity(value.len());
    let mut esc = false;
    for c in value.chars() {
        if esc {
            v.push(c);
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else {
            v.push(c);
        }
    }
    Ok((name, v))
}

/// A tag value escaped for writing between double quotes (the inverse of [`parse_tag_pair`]).
pub fn escape_tag_value(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_values_round_trip() {
        for v in ["plain", "a \"quoted\" name", "back\\slash", "", "\\\"", "ends with \\"] {
            let line = format!("[Event \"{}\"]", escape_tag_value(v));
            assert_eq!(parse_tag_pair(&line), Ok(("Event", v.to_string())), "{line}");
        }
    }

    #[test]
    fn malformed_pairs_say_what_is_wrong() {
        assert_eq!(parse_tag_pair("[Event]"), Err("malformed tag pair '[Event]'".to_string()));
        assert_eq!(parse_tag_pair("[Event \"x\""), Err("malformed tag pair '[Event \"x\"'".to_string()));
        assert_eq!(parse_tag_pair("[Event x]"), Err("tag Event: value must be in double quotes".to_string()));
    }
}

